package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
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

func TestClaudeCodeHook(t *testing.T) {
	// Ensures the hook, fed Claude Code's SessionStart JSON, prints the list
	// on startup and resume, compacts on compact (printing the injected
	// snapshot and the forced TaskList), and follows the lineage on the
	// next compaction, all bound by the Claude Code session id.
	ctx := context.Background()
	sock := testutil.SocketPath(t)
	startDaemon(t, filepath.Join(t.TempDir(), "h.db"), sock)
	c := testutil.DialSocket(t, sock)
	const claude = "5f1c2d3e-claude-session"
	_, err := c.CreateSession(ctx, client.CreateSession{SessionID: claude})
	require.NoError(t, err)

	stdout, stderr, code := runHook(t, sock, hookInput(claude, "startup"))
	assert.Equal(t, 0, code)
	assert.Empty(t, stdout, "an empty list adds nothing")
	assert.Contains(t, stderr, "has no tasks")

	for _, s := range []string{"Read the code", "Fix the bug"} {
		_, err := c.CallTool(ctx, client.ToolCall{SessionID: claude, Name: "TaskCreate", Arguments: map[string]any{"subject": s}})
		require.NoError(t, err)
	}
	_, err = c.CallTool(ctx, client.ToolCall{SessionID: claude, Name: "TaskUpdate", Arguments: map[string]any{"taskid": 1, "status": "completed"}})
	require.NoError(t, err)

	for _, source := range []string{"startup", "resume"} {
		stdout, _, code = runHook(t, sock, hookInput(claude, source))
		assert.Equal(t, 0, code)
		ctxText := decodeHook(t, stdout).HookSpecificOutput.AdditionalContext
		assert.Contains(t, ctxText, "#1 [completed] Read the code", source)
		assert.Contains(t, ctxText, "#2 [pending] Fix the bug", source)
	}
	got, err := c.GetSession(ctx, claude)
	require.NoError(t, err)
	assert.Equal(t, claude, got.HeadID, "startup and resume change nothing")

	stdout, _, code = runHook(t, sock, hookInput(claude, "compact"))
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
	assert.Contains(t, ctxText, resumed.Messages[0].Content, "the injected snapshot message")
	require.NotNil(t, resumed.ForcedCall)
	assert.Contains(t, ctxText, "TaskList was called for you after the compaction (call "+resumed.ForcedCall.CallID+")")
	var forced client.CallToolResult
	require.NoError(t, json.Unmarshal(resumed.ForcedCall.Result, &forced))
	assert.Contains(t, ctxText, forced.Text(), "the forced TaskList's result")
	assert.Equal(t, 2, strings.Count(ctxText, "#2 [pending] Fix the bug"), "once in the snapshot, once in the forced result")

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

func TestClaudeCodeHookNeverBreaksTheHost(t *testing.T) {
	// Ensures every failure prints nothing on stdout, one line on stderr,
	// and exits 0: no daemon, an unknown session, bad input, other events.
	sock := testutil.SocketPath(t)
	startDaemon(t, filepath.Join(t.TempDir(), "h.db"), sock)
	c := testutil.DialSocket(t, sock)
	_, err := c.CreateSession(context.Background(), client.CreateSession{SessionID: "empty"})
	require.NoError(t, err)
	for name, tc := range map[string]struct{ socket, input, stderr string }{
		"empty list":      {sock, hookInput("empty", "compact"), "session empty has no tasks"},
		"no daemon":       {filepath.Join(t.TempDir(), "none.sock"), hookInput("s", "compact"), "is the daemon running?"},
		"unknown session": {sock, hookInput("never-used", "compact"), "session never-used has no task list yet"},
		"clear":           {sock, hookInput("never-used", "clear"), `source "clear" carries no list`},
		"other event":     {sock, `{"session_id":"s","hook_event_name":"Stop"}`, `not "Stop"`},
		"not JSON":        {sock, `{"session_id":`, "not the JSON Claude Code sends"},
		"no session id":   {sock, `{"hook_event_name":"SessionStart","source":"resume"}`, "no session"},
	} {
		stdout, stderr, code := runHook(t, tc.socket, tc.input)
		assert.Equal(t, 0, code, name)
		assert.Empty(t, stdout, name)
		assert.Contains(t, stderr, tc.stderr, name)
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "%s: one line: %q", name, stderr)
	}
	got, err := c.GetSession(context.Background(), "empty")
	require.NoError(t, err)
	assert.Equal(t, "active", got.Status, "an empty list is not compacted")
	_, stderr, code := runHook(t, sock, "", "--bogus")
	assert.Equal(t, 2, code, "a bad flag is the user's mistake in settings.json: say so")
	assert.Contains(t, stderr, "bogus")
}
