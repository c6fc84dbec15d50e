package hook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/binding"
	"github.com/tasksessiond/tasksessiond/internal/hook"
	"github.com/tasksessiond/tasksessiond/internal/host/transcript"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

var ctx = context.Background()

// bindingHost names the host process in the tests' bindings.
const bindingHost = "claude-code"

// fixture is a real daemon on a real socket, a client of it, and the hook's
// Config aimed at it (counting its dials).
type fixture struct {
	c     *client.Client
	cfg   hook.Config
	dials *atomic.Int32
	bind  string // the binding directory of cfg.Bind
	pid   int    // the host process of cfg.Bind
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	f := &fixture{c: d.Dial(t), dials: new(atomic.Int32), bind: runtimeDir(t), pid: os.Getpid()}
	f.cfg = hook.Config{
		Dial: func(ctx context.Context) (*client.Client, error) {
			f.dials.Add(1)
			return client.Dial(ctx, d.Socket)
		},
		Bind:    hook.BindTo(f.bind, bindingHost, f.pid),
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

// bound is the conversation the binding file records for the fixture's
// host process, as the bridge reads it.
func (f *fixture) bound() binding.Conversation {
	return binding.Read(f.bind, binding.KeyOf(bindingHost, f.pid))
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

// start is Claude Code's SessionStart input.
func start(id, source, transcript string) hook.Input {
	return hook.Input{SessionID: id, HookEventName: "SessionStart", Source: source, Cwd: "/home/u/p", TranscriptPath: transcript}
}

// added is the context an output adds, checked to be a SessionStart one.
func added(t *testing.T, out hook.Output) string {
	t.Helper()
	assert.Equal(t, "SessionStart", out.HookSpecificOutput.HookEventName)
	require.NotEmpty(t, out.HookSpecificOutput.AdditionalContext)
	return out.HookSpecificOutput.AdditionalContext
}

// writeTranscript writes a Claude Code transcript (JSONL) of lines.
func writeTranscript(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "conversation.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return path
}

// The lines of a Claude Code transcript that the hook reads.
const (
	userLine = `{"type":"user","message":{"role":"user","content":"hello"},"uuid":"u1","sessionId":"s"}`
	boundary = `{"parentUuid":null,"logicalParentUuid":"u1","isSidechain":false,"type":"system","subtype":"compact_boundary",` +
		`"content":"Conversation compacted","isMeta":false,"level":"info","compactMetadata":{"trigger":"auto","preTokens":150000}}`
)

// hookContext is the transcript line in which Claude Code keeps a hook's
// additional context.
func hookContext(text string) string {
	b, _ := json.Marshal(map[string]any{"type": "attachment", "attachment": map[string]any{
		"type": "hook_additional_context", "hookEvent": "SessionStart", "content": []string{text}}})
	return string(b)
}

// toolUse and toolResult are the transcript lines of one call of an MCP
// server's tool.
func toolUse(id, server, tool, input string) string {
	return `{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"` + id +
		`","name":"mcp__` + server + `__` + tool + `","input":` + input + `}]}}`
}

func toolResult(id string, isError bool) string {
	return fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"%s","is_error":%t,`+
		`"content":[{"type":"text","text":"ok"}]}]}}`, id, isError)
}

// tail is the last line of an added list: the session and the version.
var tail = regexp.MustCompile(`\n\n\(tasksessiond session ([^,]+), list [0-9a-f]+\)$`)

func TestRunActsOnSessionStartOnly(t *testing.T) {
	// Ensures the hook adds nothing, and does not reach for the daemon,
	// for an event other than SessionStart or a source it does not know;
	// and that an input with no session id (and no --session) is an
	// error, not "nothing to add".
	f := newFixture(t)
	f.create(t, "conv", "Read the code")
	for _, tc := range []struct {
		name string
		in   hook.Input
		want string
	}{
		{"other event", hook.Input{SessionID: "conv", HookEventName: "Stop", Source: "resume"}, `the hook acts on SessionStart, not "Stop"`},
		{"no event", hook.Input{SessionID: "conv", Source: "resume"}, `not ""`},
		{"unknown source", start("conv", "teleport", ""), `source "teleport" carries no list`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := hook.Run(ctx, f.cfg, tc.in)
			require.ErrorIs(t, err, hook.ErrNothing)
			assert.ErrorContains(t, err, tc.want)
			assert.Equal(t, hook.Output{}, out)
		})
	}
	out, err := hook.Run(ctx, f.cfg, start("", "resume", ""))
	require.Error(t, err)
	assert.NotErrorIs(t, err, hook.ErrNothing, "a missing session id is something wrong")
	assert.ErrorContains(t, err, "no session")
	assert.Equal(t, hook.Output{}, out)
	assert.Zero(t, f.dials.Load(), "nothing to do needs no daemon")
}

func TestRunStartup(t *testing.T) {
	// Ensures "startup" of a new conversation binds the bridge to it and
	// adds nothing (its list is empty, and the daemon does not create it
	// until the bridge's first call), while a session pinned with
	// --session (Config.SessionID) gets its list at startup and binds
	// nothing.
	f := newFixture(t)
	path := writeTranscript(t, userLine)

	out, err := hook.Run(ctx, f.cfg, start("new-conv", "startup", path))
	require.ErrorIs(t, err, hook.ErrNothing)
	assert.ErrorContains(t, err, "session new-conv has no task list yet")
	assert.Equal(t, hook.Output{}, out)
	assert.Equal(t, binding.Conversation{ID: "new-conv", Transcript: path}, f.bound(), "the bridge serves the new conversation")
	_, err = f.c.GetSession(ctx, "new-conv")
	require.ErrorIs(t, err, client.ErrSessionNotFound, "startup creates no session")

	f.create(t, "pinned", "Read the code", "Fix the bug")
	cfg := f.cfg
	cfg.SessionID = "pinned"
	out, err = hook.Run(ctx, cfg, start("other-conv", "startup", path))
	require.NoError(t, err)
	text := added(t, out)
	assert.Contains(t, text, "#1 [pending] Read the code")
	assert.Contains(t, text, "#2 [pending] Fix the bug")
	assert.Contains(t, text, "the next mcp__tasks__TaskCreate gets #3")
	assert.Equal(t, "new-conv", f.bound().ID, "a pinned session binds nothing")
}

func TestRunResume(t *testing.T) {
	// Ensures "resume" adds the conversation's list (naming the tools as
	// the model knows them, and ending with the marker of its version)
	// unless the transcript already holds that very list after its last
	// compaction boundary; a list seen only before the boundary, or an
	// older version of it, or a transcript that cannot be read, gets the
	// list added again. Resume changes nothing in the daemon.
	f := newFixture(t)
	f.create(t, "conv", "Read the code", "Fix the bug")
	f.call(t, "conv", "TaskUpdate", map[string]any{"taskid": 1, "status": "completed"})

	out, err := hook.Run(ctx, f.cfg, start("conv", "resume", writeTranscript(t, userLine)))
	require.NoError(t, err)
	first := added(t, out)
	assert.Contains(t, first, "#1 [completed] Read the code")
	assert.Contains(t, first, "#2 [pending] Fix the bug")
	assert.Contains(t, first, "Keep it current with mcp__tasks__TaskUpdate; the next mcp__tasks__TaskCreate gets #3.")
	m := tail.FindStringSubmatch(first)
	require.NotNil(t, m, "the list ends with its marker: %q", first)
	assert.Equal(t, "conv", m[1])
	assert.Equal(t, "conv", f.bound().ID, "resume binds too")

	// An older version of the list: the same tasks before the update.
	f.create(t, "older", "Read the code", "Fix the bug")
	out, err = hook.Run(ctx, f.cfg, start("older", "resume", ""))
	require.NoError(t, err)
	older := added(t, out)
	require.NotEqual(t, tail.FindString(older), tail.FindString(first))

	for _, tc := range []struct {
		name  string
		lines []string
		adds  bool
	}{
		{"nothing seen", []string{userLine}, true},
		{"seen", []string{userLine, hookContext(first), userLine}, false},
		{"seen after the last boundary", []string{hookContext(first), boundary, userLine, hookContext(first)}, false},
		{"seen only before the last boundary", []string{hookContext(first), boundary, userLine}, true},
		{"seen before two boundaries", []string{boundary, hookContext(first), boundary}, true},
		{"an older version seen", []string{userLine, hookContext(older)}, true},
		{"no transcript", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "missing.jsonl")
			if tc.lines != nil {
				path = writeTranscript(t, tc.lines...)
			}
			out, err := hook.Run(ctx, f.cfg, start("conv", "resume", path))
			if !tc.adds {
				require.ErrorIs(t, err, hook.ErrNothing)
				assert.ErrorContains(t, err, "the conversation already holds this list of conv")
				assert.Equal(t, hook.Output{}, out)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, first, added(t, out), "the same list, said the same way")
		})
	}

	got, err := f.c.GetSession(ctx, "conv")
	require.NoError(t, err)
	assert.Equal(t, "active", got.Status, "resume compacts nothing")
	assert.Equal(t, "conv", got.HeadID)
}

func TestRunCompact(t *testing.T) {
	// Ensures "compact" compacts the conversation's session: the successor
	// exists, holds every task and goes on numbering; the added context is
	// the successor's list, said once, naming the successor; a resume right
	// after (the compact output in the transcript after the boundary) adds
	// nothing; and the next compaction, given the first id, compacts the
	// newest session of the lineage. An empty list is not compacted.
	f := newFixture(t)
	f.create(t, "conv", "Read the code", "Fix the bug")
	f.call(t, "conv", "TaskUpdate", map[string]any{"taskid": 2, "status": "in_progress"})

	out, err := hook.Run(ctx, f.cfg, start("conv", "compact", ""))
	require.NoError(t, err)
	text := added(t, out)

	old, err := f.c.GetSession(ctx, "conv")
	require.NoError(t, err)
	assert.Equal(t, "compacted", old.Status)
	successor := old.HeadID
	require.NotEqual(t, "conv", successor)
	next, err := f.c.GetSession(ctx, successor)
	require.NoError(t, err)
	assert.Equal(t, "active", next.Status)
	assert.Equal(t, "conv", next.ParentID)
	resumed, err := f.c.ResumeSession(ctx, successor)
	require.NoError(t, err)
	assert.Len(t, resumed.Tasks, 2)
	assert.Equal(t, 3, resumed.NextTaskid)
	require.NotNil(t, resumed.ForcedCall, "the forced TaskList is in the successor's log")

	assert.Contains(t, text, "mcp__tasks__TaskList was called for you after the compaction")
	assert.Contains(t, text, "the next mcp__tasks__TaskCreate gets #3")
	assert.Equal(t, 1, strings.Count(text, "#1 [pending] Read the code"), "the list is said once")
	assert.Equal(t, 1, strings.Count(text, "#2 [inprogress] Fix the bug"), "the list is said once")
	m := tail.FindStringSubmatch(text)
	require.NotNil(t, m, text)
	assert.Equal(t, successor, m[1], "the marker names the successor")

	path := writeTranscript(t, userLine, boundary, hookContext(text))
	_, err = hook.Run(ctx, f.cfg, start("conv", "resume", path))
	require.ErrorIs(t, err, hook.ErrNothing, "the compacted context already holds the list")

	f.call(t, successor, "TaskCreate", map[string]any{"subject": "Ship it"})
	out, err = hook.Run(ctx, f.cfg, start("conv", "compact", path))
	require.NoError(t, err)
	assert.Contains(t, added(t, out), "#3 [pending] Ship it")
	got, err := f.c.GetSession(ctx, successor)
	require.NoError(t, err)
	assert.Equal(t, "compacted", got.Status, "the head was compacted, not the first session again")

	f.create(t, "empty")
	_, err = hook.Run(ctx, f.cfg, start("empty", "compact", ""))
	require.ErrorIs(t, err, hook.ErrNothing)
	assert.ErrorContains(t, err, "session empty has no tasks")
	got, err = f.c.GetSession(ctx, "empty")
	require.NoError(t, err)
	assert.Equal(t, "active", got.Status, "an empty list is not compacted")
}

func TestRunClear(t *testing.T) {
	// Ensures "/clear" binds the bridge to the new conversation id (and its
	// transcript) and adds nothing, without reaching for the daemon or
	// touching the list of the conversation it left; a session pinned with
	// --session keeps its list through /clear.
	f := newFixture(t)
	f.create(t, "before", "Read the code")
	_, err := hook.Run(ctx, f.cfg, start("before", "resume", ""))
	require.NoError(t, err)
	require.Equal(t, "before", f.bound().ID)
	dials := f.dials.Load()

	path := writeTranscript(t, userLine)
	out, err := hook.Run(ctx, f.cfg, start("after", "clear", path))
	require.ErrorIs(t, err, hook.ErrNothing)
	assert.ErrorContains(t, err, "/clear starts conversation after with an empty list")
	assert.Equal(t, hook.Output{}, out)
	assert.Equal(t, binding.Conversation{ID: "after", Transcript: path}, f.bound(), "the bridge now serves the new conversation")
	assert.Equal(t, dials, f.dials.Load(), "/clear needs no daemon")
	_, err = f.c.GetSession(ctx, "after")
	require.ErrorIs(t, err, client.ErrSessionNotFound)
	before, err := f.c.GetSession(ctx, "before")
	require.NoError(t, err)
	assert.Equal(t, "active", before.Status)
	assert.Equal(t, 1, before.Counts.Total)

	cfg := f.cfg
	cfg.SessionID = "before"
	out, err = hook.Run(ctx, cfg, start("cleared-again", "clear", path))
	require.NoError(t, err)
	assert.Contains(t, added(t, out), "#1 [pending] Read the code")
	assert.Equal(t, "after", f.bound().ID, "a pinned session binds nothing")
}

func TestRunForkReplaysTheTranscript(t *testing.T) {
	// Ensures a conversation the daemon does not know (a fork: a new id
	// over a copy of the history) gets the list its transcript's Task calls
	// made, replayed in order: failed and unanswered calls, reads and
	// another server's tools skipped, so the ids are the ones the model
	// saw; it is bound, its list added, and its next taskid continues the
	// history. A transcript with no Task calls (or none at all) makes
	// nothing.
	f := newFixture(t)
	path := writeTranscript(t,
		userLine,
		toolUse("t1", "tasks", "TaskCreate", `{"subject":"Read the code"}`), toolResult("t1", false),
		toolUse("t2", "tasks", "TaskCreate", `{"subject":"Fix the bug","description":"in parse"}`), toolResult("t2", false),
		toolUse("t3", "tasks", "TaskUpdate", `{"taskid":9,"status":"completed"}`), toolResult("t3", true),
		toolUse("t4", "other", "TaskCreate", `{"subject":"another server's task"}`), toolResult("t4", false),
		toolUse("t5", "tasks", "TaskUpdate", `{"taskid":1,"status":"completed"}`), toolResult("t5", false),
		toolUse("t6", "tasks", "TaskList", `{}`), toolResult("t6", false),
		toolUse("t7", "tasks", "TaskCreate", `{"subject":"Write the test"}`), toolResult("t7", false),
		toolUse("t8", "tasks", "TaskCreate", `{"subject":"cut off before its result"}`),
	)
	for _, source := range []string{"fork", "resume"} {
		t.Run(source, func(t *testing.T) {
			id := "forked-by-" + source
			out, err := hook.Run(ctx, f.cfg, start(id, source, path))
			require.NoError(t, err)
			text := added(t, out)
			assert.Contains(t, text, "#1 [completed] Read the code")
			assert.Contains(t, text, "#2 [pending] Fix the bug")
			assert.Contains(t, text, "#3 [pending] Write the test")
			assert.NotContains(t, text, "another server's task")
			assert.NotContains(t, text, "cut off")
			assert.Equal(t, binding.Conversation{ID: id, Transcript: path}, f.bound())

			got, err := f.c.ResumeSession(ctx, id)
			require.NoError(t, err)
			require.Len(t, got.Tasks, 3)
			assert.Equal(t, "in parse", got.Tasks[1].Description)
			assert.Equal(t, 4, got.NextTaskid, "ids continue from the history")

			_, err = hook.Run(ctx, f.cfg, start(id, "resume", writeTranscript(t, hookContext(text))))
			require.ErrorIs(t, err, hook.ErrNothing, "the replayed list, once added, is not added again")
		})
	}

	for name, path := range map[string]string{
		"no Task calls":     writeTranscript(t, userLine, toolUse("x1", "other", "TaskCreate", `{"subject":"s"}`), toolResult("x1", false)),
		"no transcript":     filepath.Join(t.TempDir(), "missing.jsonl"),
		"no transcript set": "",
	} {
		t.Run(name, func(t *testing.T) {
			id := "empty-fork-" + strings.ReplaceAll(name, " ", "-")
			_, err := hook.Run(ctx, f.cfg, start(id, "fork", path))
			require.ErrorIs(t, err, hook.ErrNothing)
			assert.ErrorContains(t, err, "session "+id+" has no task list yet")
			_, err = f.c.GetSession(ctx, id)
			require.ErrorIs(t, err, client.ErrSessionNotFound, "nothing was made")
		})
	}
}

func TestRunSaysALostListPlainly(t *testing.T) {
	// Ensures a conversation that was shown a list (a hook's marker in its
	// history) whose session the daemon no longer has and whose history
	// holds no Task calls to rebuild it from (tasks made elsewhere) is
	// told so plainly, once, instead of meeting an empty list its history
	// contradicts; and that nothing is made in the daemon.
	f := newFixture(t)
	shown := "Your task list for this conversation, kept by tasksessiond.\n\n#1 [pending] Write the parser\n\n(tasksessiond session gone, list 1234)"
	path := writeTranscript(t, userLine, hookContext(shown))
	out, err := hook.Run(ctx, f.cfg, start("gone", "resume", path))
	require.NoError(t, err)
	text := added(t, out)
	assert.Contains(t, text, "The task list of this conversation was lost (tasksessiond session gone)")
	assert.Contains(t, text, "mcp__tasks__TaskCreate gets #1")
	_, err = f.c.GetSession(ctx, "gone")
	require.ErrorIs(t, err, client.ErrSessionNotFound, "nothing was made")

	_, err = hook.Run(ctx, f.cfg, start("gone", "resume", writeTranscript(t, userLine, hookContext(shown), hookContext(text))))
	require.ErrorIs(t, err, hook.ErrNothing, "said once")
}

func TestRunNamesTheConfiguredServer(t *testing.T) {
	// Ensures Config.Server names the tools as the model knows them
	// (mcp__<server>__…) in the added context, and picks that server's
	// calls out of a fork's transcript.
	f := newFixture(t)
	path := writeTranscript(t,
		toolUse("t1", "tasks", "TaskCreate", `{"subject":"the default server's task"}`), toolResult("t1", false),
		toolUse("t2", "todo", "TaskCreate", `{"subject":"todo's task"}`), toolResult("t2", false),
	)
	cfg := f.cfg
	cfg.Server = "todo"
	out, err := hook.Run(ctx, cfg, start("fork", "fork", path))
	require.NoError(t, err)
	text := added(t, out)
	assert.Contains(t, text, "#1 [pending] todo's task")
	assert.NotContains(t, text, "the default server's task")
	assert.Contains(t, text, "mcp__todo__TaskUpdate")
	assert.NotContains(t, text, "mcp__tasks__")
}

// fill makes session id hold n tasks with long subjects and descriptions
// (characters outside the BMP among them, which count twice for Claude
// Code), every other one completed: replayed in one round trip, as a
// fork's list is.
func fill(t *testing.T, f *fixture, id string, n int) {
	t.Helper()
	var calls []client.TranscriptCall
	for i := 1; i <= n; i++ {
		calls = append(calls, client.TranscriptCall{Name: "TaskCreate", Arguments: map[string]any{
			"subject":     fmt.Sprintf("Step %d of the plan: %s", i, strings.Repeat("étape ", 20)),
			"description": strings.Repeat("a long description 🧪 ", 15),
		}})
		if i%2 == 0 {
			calls = append(calls, client.TranscriptCall{Name: "TaskUpdate", Arguments: map[string]any{"taskid": i, "status": "completed"}})
		}
	}
	r, err := f.c.ReplaySession(ctx, id, calls)
	require.NoError(t, err)
	require.Equal(t, n, r.Session.Counts.Total)
}

func TestRunFitsTheBudget(t *testing.T) {
	// Ensures the added context never exceeds the configured limit, as
	// Claude Code counts (UTF-16 units), on resume and on compact, with
	// 200 tasks of long descriptions: the default 9,500 keeps every open
	// task's id and the list's marker; a limit too small for the hook's
	// own words still gives output within it.
	f := newFixture(t)
	fill(t, f, "big", 200)
	for _, tc := range []struct {
		limit  int // 0: the default
		source string
	}{{0, "resume"}, {0, "compact"}, {2000, "resume"}, {150, "compact"}} {
		t.Run(fmt.Sprintf("%d/%s", tc.limit, tc.source), func(t *testing.T) {
			cfg := f.cfg
			cfg.MaxChars = tc.limit
			out, err := hook.Run(ctx, cfg, start("big", tc.source, ""))
			require.NoError(t, err)
			text := added(t, out)
			want := tc.limit
			if want == 0 {
				want = tools.MaxHookChars
			}
			assert.LessOrEqual(t, tools.Length(text), want)
			assert.True(t, utf8.ValidString(text), "no character cut in two")
			if tc.limit == 0 {
				assert.Regexp(t, tail, text)
				for i := 1; i <= 200; i += 2 {
					assert.Contains(t, text, fmt.Sprintf("#%d [pending] Step %d of the plan", i, i), "every open task")
				}
			}
		})
	}
}

func TestRunTightBudgetKeepsTheMarker(t *testing.T) {
	// Ensures a limit too small for the hook's own words still ends the
	// list with its marker when the marker leaves the list room, so that
	// a resume of a resume finds the list already said and adds nothing;
	// a limit smaller still gives the bare list, within it.
	f := newFixture(t)
	fill(t, f, "big", 50)
	cfg := f.cfg
	cfg.MaxChars = 300
	out, err := hook.Run(ctx, cfg, start("big", "resume", ""))
	require.NoError(t, err)
	first := added(t, out)
	assert.LessOrEqual(t, tools.Length(first), 300)
	assert.Regexp(t, tail, first)
	assert.Contains(t, first, "Tasks: 25 pending, 25 completed.")

	_, err = hook.Run(ctx, cfg, start("big", "resume", writeTranscript(t, userLine, hookContext(first), userLine)))
	require.ErrorIs(t, err, hook.ErrNothing)

	cfg.MaxChars = 120
	out, err = hook.Run(ctx, cfg, start("big", "resume", ""))
	require.NoError(t, err)
	bare := added(t, out)
	assert.LessOrEqual(t, tools.Length(bare), 120)
	assert.NotRegexp(t, tail, bare)
}

func TestRunMeasuresInBytesForCodex(t *testing.T) {
	// Ensures a Config.Measure in UTF-8 bytes (Codex CLI keeps 10,000
	// bytes of a hook's context) fits the added context in bytes, whole
	// characters only, where the default measure (characters) passes the
	// limit in bytes with accented subjects.
	f := newFixture(t)
	calls := make([]client.TranscriptCall, 300)
	for i := range calls {
		calls[i] = client.TranscriptCall{Name: "TaskCreate", Arguments: map[string]any{"subject": fmt.Sprintf("Étape n° %d : vérifier l'élément", i+1)}}
	}
	_, err := f.c.ReplaySession(ctx, "thread", calls)
	require.NoError(t, err)

	out, err := hook.Run(ctx, f.cfg, start("thread", "resume", ""))
	require.NoError(t, err)
	chars := added(t, out)
	assert.LessOrEqual(t, tools.Length(chars), tools.MaxHookChars)
	require.Greater(t, len(chars), tools.MaxHookChars, "in bytes, the fitting in characters overflows")

	cfg := f.cfg
	cfg.Measure = func(s string) int { return len(s) }
	out, err = hook.Run(ctx, cfg, start("thread", "resume", ""))
	require.NoError(t, err)
	bytes := added(t, out)
	assert.LessOrEqual(t, len(bytes), tools.MaxHookChars)
	assert.True(t, utf8.ValidString(bytes), "no character cut in two")
	assert.Contains(t, bytes, "#1 [pending] Étape n° 1 : vérifier l'élément")
	assert.Regexp(t, tail, bytes)
	assert.Equal(t, tail.FindString(chars), tail.FindString(bytes), "the same list, the same marker")
}

func TestBindTo(t *testing.T) {
	// Ensures BindTo writes the binding file the bridge reads, under the
	// host process's key (Claude Code's pid and start time), each new
	// conversation replacing the last; another host's key reads nothing;
	// and a binding that cannot be written fails the run with that error.
	dir := runtimeDir(t)
	pid := os.Getpid()
	bind := hook.BindTo(dir, bindingHost, pid)
	key := binding.KeyOf(bindingHost, pid)

	assert.Equal(t, binding.Conversation{}, binding.Read(dir, key), "nothing bound yet")
	require.NoError(t, bind(binding.Conversation{ID: "conv-1", Transcript: "/home/u/.claude/projects/p/conv-1.jsonl"}))
	assert.Equal(t, binding.Conversation{ID: "conv-1", Transcript: "/home/u/.claude/projects/p/conv-1.jsonl"}, binding.Read(dir, key))
	assert.FileExists(t, filepath.Join(dir, "bind", bindingHost+"-"+strconv.Itoa(pid)))
	require.NoError(t, bind(binding.Conversation{ID: "conv-2"}))
	assert.Equal(t, binding.Conversation{ID: "conv-2"}, binding.Read(dir, key), "the newest conversation wins")
	assert.Equal(t, binding.Conversation{}, binding.Read(dir, binding.KeyOf("codex", pid)), "another host's process")

	require.Error(t, bind(binding.Conversation{ID: "two\nlines"}), "an id the file cannot hold")
	assert.Equal(t, "conv-2", binding.Read(dir, key).ID, "a refused binding leaves the last one")

	shared := t.TempDir()
	require.NoError(t, os.Chmod(shared, 0o755))
	var warned []error
	_, err := hook.Run(ctx, hook.Config{Bind: hook.BindTo(shared, bindingHost, pid), Warn: func(err error) { warned = append(warned, err) }},
		start("conv-3", "clear", ""))
	require.ErrorIs(t, err, hook.ErrNothing, "the run goes on: /clear adds nothing")
	require.Len(t, warned, 1, "a binding that failed is said")
	assert.ErrorContains(t, warned[0], "open to other users")
}
