package gemini_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/binding"
	"github.com/tasksessiond/tasksessiond/internal/hook"
	"github.com/tasksessiond/tasksessiond/internal/host/gemini"
	"github.com/tasksessiond/tasksessiond/internal/host/transcript"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

var ctx = context.Background()

// fixture is a real daemon on a real socket, a client of it, and the hook's
// Config aimed at it (counting its dials).
type fixture struct {
	c     *client.Client
	cfg   hook.Config
	dials *atomic.Int32
	pid   int // the host process a binding is keyed by
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	f := &fixture{c: d.Dial(t), dials: new(atomic.Int32), pid: os.Getpid()}
	f.cfg = hook.Config{
		Dial: func(ctx context.Context) (*client.Client, error) {
			f.dials.Add(1)
			return client.Dial(ctx, d.Socket)
		},
		History: transcript.Reader{},
	}
	return f
}

// runtimeDir is a private directory, as the daemon's runtime directory is
// (a binding is written only there).
func runtimeDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o700))
	return dir
}

// create makes session id and creates a task of each subject in it.
func (f *fixture) create(t *testing.T, id string, subjects ...string) {
	t.Helper()
	_, err := f.c.CreateSession(ctx, wire.CreateSession{SessionID: id})
	require.NoError(t, err)
	for _, s := range subjects {
		f.call(t, id, "TaskCreate", map[string]any{"subject": s})
	}
}

func (f *fixture) call(t *testing.T, id, tool string, args map[string]any) {
	t.Helper()
	r, err := f.c.CallTool(ctx, client.ToolCall{SessionID: id, Name: tool, Arguments: args})
	require.NoError(t, err)
	require.False(t, r.IsError, "%s %v: %s", tool, args, r.Raw)
}

func geminiInput(t *testing.T, raw string) gemini.GeminiInput {
	t.Helper()
	in, err := gemini.ReadGeminiInput(strings.NewReader(raw))
	require.NoError(t, err)
	return in
}

// BeforeModel: a request without a compression summary is left alone, and
// the daemon is not asked; one with a summary gets the list appended to
// the summary's message (the messages before it as they were, the ones
// after it left out, which Gemini CLI keeps), once.
func TestGeminiBeforeModel(t *testing.T) {
	f := newFixture(t)
	f.create(t, "g1", "Write the parser", "Test it")
	f.call(t, "g1", "TaskUpdate", map[string]any{"taskid": 1, "status": "in_progress"})

	plain := geminiInput(t, `{"session_id":"g1","hook_event_name":"BeforeModel","llm_request":{"messages":[{"role":"user","content":"<session_context>x</session_context>"},{"role":"user","content":"hi"}]}}`)
	_, err := gemini.RunGemini(ctx, f.cfg, plain)
	assert.ErrorIs(t, err, hook.ErrNothing)
	assert.Zero(t, f.dials.Load(), "no daemon asked for a request without a compression")

	compressed := geminiInput(t, `{"session_id":"g1","hook_event_name":"BeforeModel","llm_request":{"messages":[`+
		`{"role":"user","content":"<session_context>x</session_context>"},`+
		`{"role":"user","content":"<state_snapshot>the summary</state_snapshot>"},`+
		`{"role":"model","content":"Got it. Thanks for the additional context!"},{"role":"user","content":"go on"}]}}`)
	out, err := gemini.RunGemini(ctx, f.cfg, compressed)
	require.NoError(t, err)
	o, ok := out.(gemini.BeforeModelOutput)
	require.True(t, ok, "%T", out)
	assert.Equal(t, "BeforeModel", o.HookSpecificOutput.HookEventName)
	msgs := o.HookSpecificOutput.LLMRequest.Messages
	require.Len(t, msgs, 2)
	assert.Equal(t, compressed.LLMRequest.Messages[0], msgs[0])
	assert.Equal(t, "user", msgs[1].Role)
	assert.True(t, strings.HasPrefix(msgs[1].Content, "<state_snapshot>the summary</state_snapshot>\n\n"), msgs[1].Content)
	for _, want := range []string{"#1 [inprogress] Write the parser", "#2 [pending] Test it", "mcp_tasks_TaskUpdate", "the next mcp_tasks_TaskCreate gets #3", "(tasksessiond session g1, list "} {
		assert.Contains(t, msgs[1].Content, want)
	}

	// A request that holds this list already (a resume's context kept in
	// the tail) gets nothing more.
	again := compressed
	again.LLMRequest.Messages = append(append([]gemini.GeminiMessage(nil), compressed.LLMRequest.Messages...), gemini.GeminiMessage{Role: "user", Content: msgs[1].Content})
	_, err = gemini.RunGemini(ctx, f.cfg, again)
	assert.ErrorIs(t, err, hook.ErrNothing)

	// A session without tasks, or unknown: nothing.
	for _, id := range []string{"nobody"} {
		in := compressed
		in.SessionID = id
		_, err := gemini.RunGemini(ctx, f.cfg, in)
		assert.ErrorIs(t, err, hook.ErrNothing, id)
	}
}

// 300 open tasks: what BeforeModel appends stays within the budget; with
// short subjects it names every open task with its status and subject,
// with long ones it names as many as fit and counts the rest.
func TestGeminiBeforeModelLargeList(t *testing.T) {
	for _, tc := range []struct {
		name    string
		subject func(i int) string
		all     bool
	}{
		{"ShortSubjects", func(i int) string { return fmt.Sprintf("Step %d", i) }, true},
		{"LongSubjects", func(i int) string {
			return fmt.Sprintf("Task number %d of the big plan, with a subject of some length", i)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			var subjects []string
			for i := 1; i <= 300; i++ {
				subjects = append(subjects, tc.subject(i))
			}
			f.create(t, "big", subjects...)
			in := geminiInput(t, `{"session_id":"big","hook_event_name":"BeforeModel","llm_request":{"messages":[{"role":"user","content":"<state_snapshot>s</state_snapshot>"}]}}`)
			out, err := gemini.RunGemini(ctx, f.cfg, in)
			require.NoError(t, err)
			added := strings.TrimPrefix(out.(gemini.BeforeModelOutput).HookSpecificOutput.LLMRequest.Messages[0].Content, "<state_snapshot>s</state_snapshot>\n\n")
			assert.LessOrEqual(t, tools.Length(added), tools.MaxHookChars)
			assert.Contains(t, added, "Tasks: 300 pending.")
			named := 0
			for i := 1; i <= 300; i++ {
				if strings.Contains(added, fmt.Sprintf("#%d [pending] %s", i, subjects[i-1])) {
					named++
				}
			}
			if tc.all {
				assert.Equal(t, 300, named, "every open task with its id, status and subject")
				return
			}
			lines := regexp.MustCompile(`(?m)^#\d+ \[pending\] Task number`).FindAllString(added, -1)
			assert.Greater(t, len(lines), 100)
			assert.Contains(t, added, fmt.Sprintf("… and %d more open tasks", 300-len(lines)), "the rest counted")
		})
	}
}

// SessionStart: every source binds Gemini CLI's process to the session (no
// transcript: the bridge rebuilds nothing from Gemini's); startup and
// resume add the list, clear nothing.
func TestGeminiSessionStart(t *testing.T) {
	f := newFixture(t)
	dir := runtimeDir(t)
	f.cfg.Bind = gemini.BindGemini(dir, f.pid)
	read := func() binding.Conversation { return binding.Read(dir, binding.KeyOf("gemini", f.pid)) }
	f.create(t, "s1", "Alpha")

	out, err := gemini.RunGemini(ctx, f.cfg, geminiInput(t, `{"session_id":"s1","hook_event_name":"SessionStart","source":"resume","transcript_path":"/nonexistent/s1.json"}`))
	require.NoError(t, err)
	assert.Contains(t, out.(hook.Output).HookSpecificOutput.AdditionalContext, "#1 [pending] Alpha")
	assert.Contains(t, out.(hook.Output).HookSpecificOutput.AdditionalContext, "mcp_tasks_TaskUpdate")
	assert.Equal(t, binding.Conversation{ID: "s1"}, read())

	_, err = gemini.RunGemini(ctx, f.cfg, geminiInput(t, `{"session_id":"s2","hook_event_name":"SessionStart","source":"clear"}`))
	assert.ErrorIs(t, err, hook.ErrNothing)
	assert.Equal(t, binding.Conversation{ID: "s2"}, read())
}

// The hook finds Gemini CLI's pid past the shells between them (bash -c
// that did not exec, a wrapper script).
func TestGeminiHostPID(t *testing.T) {
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		t.Skip("no /proc")
	}
	if os.Getenv("TSD_GEMINI_PID_CHILD") == "1" {
		fmt.Print(gemini.GeminiHostPID(os.Getppid()))
		return
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	// sh runs the test binary as its child (two commands: no exec).
	cmd := exec.Command("sh", "-c", exe+" -test.run '^TestGeminiHostPID$'; true")
	cmd.Env = append(os.Environ(), "TSD_GEMINI_PID_CHILD=1")
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(out), fmt.Sprint(os.Getpid())), "got %q, want our pid %d", out, os.Getpid())
}
