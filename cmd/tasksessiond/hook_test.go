package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

// runHook runs "tasksessiond hook claude-code" with input on stdin, as
// Claude Code does, and returns its stdout, stderr and exit code.
func runHook(t *testing.T, socket, input string, flags ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"hook", "claude-code", "--socket", socket}, flags...)...)
	cmd.Stdin = strings.NewReader(input)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return o.String(), e.String(), code
}

// hookInput is the JSON Claude Code sends a SessionStart hook.
func hookInput(session, source string) string {
	b, _ := json.Marshal(map[string]string{
		"session_id": session, "transcript_path": "/home/u/.claude/projects/p/" + session + ".jsonl",
		"cwd": "/home/u/p", "hook_event_name": "SessionStart", "source": source,
	})
	return string(b)
}

type hookOutput struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

func decodeHook(t *testing.T, stdout string) hookOutput {
	t.Helper()
	var out hookOutput
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&out), stdout)
	assert.Equal(t, "SessionStart", out.HookSpecificOutput.HookEventName)
	return out
}

// transcript writes a Claude Code transcript (JSONL) holding the given
// lines, and returns its path.
func transcript(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "conversation.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return path
}

// toolUse and toolResult are the transcript lines of one Task call.
func toolUse(id, tool, input string) string {
	return `{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"mcp__tasks__` + tool + `","input":` + input + `}]}}`
}

func toolResult(id string, isError bool) string {
	return fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"%s","is_error":%t,"content":[{"type":"text","text":"ok"}]}]}}`, id, isError)
}

// hookInputAt is hookInput with a transcript path.
func hookInputAt(session, source, path string) string {
	b, _ := json.Marshal(map[string]string{"session_id": session, "transcript_path": path,
		"cwd": "/home/u/p", "hook_event_name": "SessionStart", "source": source})
	return string(b)
}

func TestClaudeCodeHook(t *testing.T) {
	// Ensures the hook, fed Claude Code's SessionStart JSON, adds the list
	// on resume (naming the tools as Claude Code shows them), adds it once
	// per change rather than once per resume, compacts on compact with the
	// list said once, and follows the lineage on the next compaction.
	ctx := context.Background()
	sock := testutil.SocketPath(t)
	startDaemon(t, filepath.Join(t.TempDir(), "h.db"), sock)
	c := testutil.DialSocket(t, sock)
	const claude = "5f1c2d3e-claude-session"
	_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: claude})
	require.NoError(t, err)

	stdout, stderr, code := runHook(t, sock, hookInput(claude, "startup"))
	assert.Equal(t, 0, code)
	assert.Empty(t, stdout, "an empty list adds nothing")
	assert.Empty(t, stderr, "quiet when nothing is wrong")

	for _, s := range []string{"Read the code", "Fix the bug"} {
		_, err := c.CallTool(ctx, client.ToolCall{SessionID: claude, Name: "TaskCreate", Arguments: map[string]any{"subject": s}})
		require.NoError(t, err)
	}
	_, err = c.CallTool(ctx, client.ToolCall{SessionID: claude, Name: "TaskUpdate", Arguments: map[string]any{"taskid": 1, "status": "completed"}})
	require.NoError(t, err)

	path := transcript(t, `{"type":"user","message":{"role":"user","content":"hello"}}`)
	stdout, _, code = runHook(t, sock, hookInputAt(claude, "resume", path))
	assert.Equal(t, 0, code)
	first := decodeHook(t, stdout).HookSpecificOutput.AdditionalContext
	assert.Contains(t, first, "#1 [completed] Read the code")
	assert.Contains(t, first, "#2 [pending] Fix the bug")
	assert.Contains(t, first, "mcp__tasks__TaskUpdate", "the tools as the model knows them")
	assert.Contains(t, first, "the next mcp__tasks__TaskCreate gets #3")

	// Claude Code keeps the added context in the transcript: a second
	// resume finds it there and adds nothing; a change makes it add again.
	ctxLine, _ := json.Marshal(map[string]any{"type": "attachment", "attachment": map[string]any{"type": "hook_additional_context", "content": []string{first}}})
	require.NoError(t, os.WriteFile(path, append(ctxLine, '\n'), 0o600))
	stdout, _, _ = runHook(t, sock, hookInputAt(claude, "resume", path))
	assert.Empty(t, stdout, "the conversation already holds this list")
	stdout, _, _ = runHook(t, sock, hookInputAt(claude, "resume", path), "--server", "todo")
	assert.Empty(t, stdout, "the list is the same whatever the tools are called")
	_, err = c.CallTool(ctx, client.ToolCall{SessionID: claude, Name: "TaskUpdate", Arguments: map[string]any{"taskid": 2, "status": "inprogress"}})
	require.NoError(t, err)
	stdout, _, _ = runHook(t, sock, hookInputAt(claude, "resume", path))
	assert.Contains(t, decodeHook(t, stdout).HookSpecificOutput.AdditionalContext, "#2 [inprogress] Fix the bug")
	got, err := c.GetSession(ctx, claude)
	require.NoError(t, err)
	assert.Equal(t, claude, got.HeadID, "startup and resume change nothing")

	stdout, _, code = runHook(t, sock, hookInputAt(claude, "compact", path))
	assert.Equal(t, 0, code)
	ctxText := decodeHook(t, stdout).HookSpecificOutput.AdditionalContext
	got, err = c.GetSession(ctx, claude)
	require.NoError(t, err)
	require.Equal(t, "compacted", got.Status)
	successor := got.HeadID
	require.NotEqual(t, claude, successor)
	resumed, err := c.ResumeSession(ctx, successor)
	require.NoError(t, err)
	require.Len(t, resumed.Messages, 1)
	require.NotNil(t, resumed.ForcedCall, "the forced TaskList is in the successor's log")
	assert.Contains(t, ctxText, "mcp__tasks__TaskList was called for you after the compaction")
	assert.Contains(t, ctxText, "the next mcp__tasks__TaskCreate gets #3")
	assert.Equal(t, 1, strings.Count(ctxText, "#2 [inprogress] Fix the bug"), "the list is said once")
	assert.Contains(t, ctxText, "#1 [completed] Read the code")

	// A write after the compaction, then a second compaction: the hook,
	// still given the first id, compacts the newest session.
	_, err = c.CallTool(ctx, client.ToolCall{SessionID: successor, Name: "TaskCreate", Arguments: map[string]any{"subject": "Ship it"}})
	require.NoError(t, err)
	stdout, _, code = runHook(t, sock, hookInput(claude, "compact"))
	assert.Equal(t, 0, code)
	assert.Contains(t, decodeHook(t, stdout).HookSpecificOutput.AdditionalContext, "#3 [pending] Ship it")
	got, err = c.GetSession(ctx, successor)
	require.NoError(t, err)
	assert.Equal(t, "compacted", got.Status)
}

func TestClaudeCodeHookFitsClaudeCodesLimit(t *testing.T) {
	// Ensures a list far past Claude Code's 10,000-character limit on a
	// hook's context is shortened by the hook, not cut by Claude Code:
	// at most 9,500 characters, every open task's id and subject kept.
	ctx := context.Background()
	sock := testutil.SocketPath(t)
	startDaemon(t, filepath.Join(t.TempDir(), "h.db"), sock)
	c := testutil.DialSocket(t, sock)
	for _, n := range []int{20, 200} {
		id := fmt.Sprintf("big-%d", n)
		_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: id})
		require.NoError(t, err)
		for i := 1; i <= n; i++ {
			_, err := c.CallTool(ctx, client.ToolCall{SessionID: id, Name: "TaskCreate", Arguments: map[string]any{
				"subject": fmt.Sprintf("Step %d of the plan", i), "description": strings.Repeat("d", 200)}})
			require.NoError(t, err)
			if i%2 == 0 {
				_, err = c.CallTool(ctx, client.ToolCall{SessionID: id, Name: "TaskUpdate", Arguments: map[string]any{"taskid": i, "status": "completed"}})
				require.NoError(t, err)
			}
		}
		for _, source := range []string{"resume", "compact"} {
			stdout, stderr, code := runHook(t, sock, hookInput(id, source))
			require.Equal(t, 0, code)
			text := decodeHook(t, stdout).HookSpecificOutput.AdditionalContext
			assert.LessOrEqual(t, len([]rune(text)), 9500, "%d tasks, %s", n, source)
			assert.Empty(t, stderr)
			for i := 1; i <= n; i += 2 {
				assert.Contains(t, text, fmt.Sprintf("#%d [pending] Step %d of the plan", i, i), "%d tasks, %s: every open task", n, source)
			}
			if n == 20 {
				assert.Contains(t, text, strings.Repeat("d", 200), "20 tasks fit whole")
			}
		}
	}
}

func TestClaudeCodeHookForkReplaysTheTranscript(t *testing.T) {
	// Ensures a forked conversation (a new id over a copy of the history,
	// unknown to the daemon) starts with the list its history made: the
	// Task calls of its transcript replayed in order, failed and unanswered
	// ones skipped, so the ids are the ones the model saw.
	ctx := context.Background()
	sock := testutil.SocketPath(t)
	startDaemon(t, filepath.Join(t.TempDir(), "h.db"), sock)
	c := testutil.DialSocket(t, sock)
	path := transcript(t,
		toolUse("t1", "TaskCreate", `{"subject":"Read the code"}`), toolResult("t1", false),
		toolUse("t2", "TaskCreate", `{"subject":"Fix the bug","description":"in parse"}`), toolResult("t2", false),
		toolUse("t3", "TaskUpdate", `{"taskid":9,"status":"completed"}`), toolResult("t3", true),
		toolUse("t4", "TaskCreate", `{}`), toolResult("t4", true),
		toolUse("t5", "TaskUpdate", `{"taskid":1,"status":"completed"}`), toolResult("t5", false),
		toolUse("t6", "TaskList", `{}`), toolResult("t6", false),
		toolUse("t7", "TaskCreate", `{"subject":"Write the test"}`), toolResult("t7", false),
		toolUse("t8", "TaskCreate", `{"subject":"cut off before its result"}`),
	)
	stdout, stderr, code := runHook(t, sock, hookInputAt("fork-1", "fork", path))
	require.Equal(t, 0, code, stderr)
	text := decodeHook(t, stdout).HookSpecificOutput.AdditionalContext
	assert.Contains(t, text, "#1 [completed] Read the code")
	assert.Contains(t, text, "#3 [pending] Write the test")
	got, err := c.ResumeSession(ctx, "fork-1")
	require.NoError(t, err)
	require.Len(t, got.Tasks, 3)
	assert.Equal(t, "in parse", got.Tasks[1].Description)
	assert.Equal(t, 4, got.NextTaskid, "ids continue from the history")
}

func TestClaudeCodeHookNeverBreaksTheHost(t *testing.T) {
	// Ensures every failure prints nothing on stdout and exits 0: no
	// daemon, an unknown session, bad input, other events; what is wrong
	// is one line on stderr, and what is merely empty says so only with
	// --verbose.
	sock := testutil.SocketPath(t)
	startDaemon(t, filepath.Join(t.TempDir(), "h.db"), sock)
	c := testutil.DialSocket(t, sock)
	_, err := c.CreateSession(context.Background(), wire.CreateSession{SessionID: "empty"})
	require.NoError(t, err)
	for name, tc := range map[string]struct{ socket, input, stderr string }{
		"empty list":      {sock, hookInput("empty", "compact"), "session empty has no tasks"},
		"no daemon":       {filepath.Join(t.TempDir(), "none.sock"), hookInput("s", "compact"), "is the daemon running?"},
		"unknown session": {sock, hookInput("never-used", "compact"), "session never-used has no task list yet"},
		"clear":           {sock, hookInput("never-used", "clear"), "/clear starts conversation never-used with an empty list"},
		"other event":     {sock, `{"session_id":"s","hook_event_name":"Stop"}`, `not "Stop"`},
		"not JSON":        {sock, `{"session_id":`, "not the JSON Claude Code sends"},
		"no session id":   {sock, `{"hook_event_name":"SessionStart","source":"resume"}`, "no session"},
	} {
		stdout, stderr, code := runHook(t, tc.socket, tc.input, "--verbose")
		assert.Equal(t, 0, code, name)
		assert.Empty(t, stdout, name)
		assert.Contains(t, stderr, tc.stderr, name)
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "%s: one line: %q", name, stderr)
	}
	_, stderr, _ := runHook(t, sock, hookInput("empty", "compact"))
	assert.Empty(t, stderr, "nothing to add is not something wrong")
	got, err := c.GetSession(context.Background(), "empty")
	require.NoError(t, err)
	assert.Equal(t, "active", got.Status, "an empty list is not compacted")
	_, stderr, code := runHook(t, sock, "", "--bogus")
	assert.Equal(t, 2, code, "a bad flag is the user's mistake in settings.json: say so")
	assert.Contains(t, stderr, "bogus")
}

func TestCodexHookFitsInBytes(t *testing.T) {
	// Ensures "hook codex" fits its output in 9,500 UTF-8 bytes, as Codex
	// counts (10,000 bytes), not characters: accented subjects take more
	// bytes than characters, and Claude Code's measure would overflow it.
	ctx := context.Background()
	sock := testutil.SocketPath(t)
	startDaemon(t, filepath.Join(t.TempDir(), "h.db"), sock)
	c := testutil.DialSocket(t, sock)
	_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: "thread-1"})
	require.NoError(t, err)
	for i := 1; i <= 400; i++ {
		_, err := c.CallTool(ctx, client.ToolCall{SessionID: "thread-1", Name: "TaskCreate", Arguments: map[string]any{"subject": fmt.Sprintf("Étape n° %d : vérifier l'élément", i)}})
		require.NoError(t, err)
	}
	out, stderr, code := runHook(t, sock, hookInput("thread-1", "resume"), "--no-autostart")
	require.Equal(t, 0, code, stderr)
	codexOut, stderr, code := func() (string, string, int) {
		cmd := exec.Command(binary, "hook", "codex", "--socket", sock)
		cmd.Stdin = strings.NewReader(hookInput("thread-1", "resume"))
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		require.NoError(t, err)
		return o.String(), e.String(), 0
	}()
	require.Equal(t, 0, code, stderr)
	claude := decodeHook(t, out).HookSpecificOutput.AdditionalContext
	codex := decodeHook(t, codexOut).HookSpecificOutput.AdditionalContext
	assert.LessOrEqual(t, len([]rune(claude)), 9500)
	assert.Greater(t, len(claude), 9500, "in bytes, Claude Code's fitting would overflow Codex")
	assert.LessOrEqual(t, len(codex), 9500, "Codex's output fits in bytes")
	assert.Contains(t, codex, "#1 [pending] Étape n° 1")
}

func TestHookWithATinyBudget(t *testing.T) {
	// Ensures a --max-chars smaller than the hook's own words still gives
	// output within it and exit 0 (it panicked, exit 2, which blocks
	// Claude Code).
	ctx := context.Background()
	sock := testutil.SocketPath(t)
	startDaemon(t, filepath.Join(t.TempDir(), "h.db"), sock)
	c := testutil.DialSocket(t, sock)
	_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: "tiny"})
	require.NoError(t, err)
	for i := range 5 {
		_, err := c.CallTool(ctx, client.ToolCall{SessionID: "tiny", Name: "TaskCreate", Arguments: map[string]any{"subject": fmt.Sprintf("Step %d", i)}})
		require.NoError(t, err)
	}
	for _, budget := range []string{"1", "100", "300"} {
		for _, source := range []string{"resume", "compact"} {
			stdout, stderr, code := runHook(t, sock, hookInput("tiny", source), "--max-chars", budget)
			require.Equal(t, 0, code, "%s %s: %s", budget, source, stderr)
			if stdout == "" {
				continue
			}
			text := decodeHook(t, stdout).HookSpecificOutput.AdditionalContext
			n, _ := strconv.Atoi(budget)
			assert.LessOrEqual(t, len([]rune(text)), n, "%s %s", budget, source)
		}
	}
}

func TestHookReadsTheTranscriptBounded(t *testing.T) {
	// Ensures a transcript_path the hook cannot read whole and quickly (a
	// FIFO no one writes, /dev/zero, a sparse file far over the bound) does
	// not hold the hook: it goes on without the transcript, adds the list
	// on resume and exits 0; a fork it cannot replay adds nothing, says
	// why, and exits 0 too.
	ctx := context.Background()
	sock := testutil.SocketPath(t)
	startDaemon(t, filepath.Join(t.TempDir(), "h.db"), sock)
	c := testutil.DialSocket(t, sock)
	_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: "conv"})
	require.NoError(t, err)
	_, err = c.CallTool(ctx, client.ToolCall{SessionID: "conv", Name: "TaskCreate", Arguments: map[string]any{"subject": "Keep reading"}})
	require.NoError(t, err)

	fifo := filepath.Join(t.TempDir(), "fifo.jsonl")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	sparse := filepath.Join(t.TempDir(), "sparse.jsonl")
	require.NoError(t, os.WriteFile(sparse, nil, 0o600))
	require.NoError(t, os.Truncate(sparse, 2<<30))
	for name, path := range map[string]string{"FIFO": fifo, "DevZero": "/dev/zero", "Sparse": sparse} {
		t.Run(name, func(t *testing.T) {
			// A failsafe, not a wait: a hook that blocks is killed here
			// rather than hang the test.
			run := func(input string) (string, string, error) {
				cx, cancel := context.WithTimeout(ctx, 2*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(cx, binary, "hook", "claude-code", "--socket", sock)
				cmd.Stdin = strings.NewReader(input)
				var o, e bytes.Buffer
				cmd.Stdout, cmd.Stderr = &o, &e
				err := cmd.Run()
				require.NoError(t, cx.Err(), "the hook was still reading when the failsafe passed")
				return o.String(), e.String(), err
			}
			stdout, stderr, err := run(hookInputAt("conv", "resume", path))
			require.NoError(t, err, stderr)
			assert.Contains(t, decodeHook(t, stdout).HookSpecificOutput.AdditionalContext, "#1 [pending] Keep reading")

			stdout, stderr, err = run(hookInputAt("fork-"+name, "fork", path))
			require.NoError(t, err, stderr)
			assert.Empty(t, stdout)
		})
	}
}
