package claudecode_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestFork ensures "claude -p --resume A --fork-session" starts the fork
// (a new conversation id) with the list A had at the fork point: the
// fork's first request carries the copied history (A's Task results), the
// bridge rebuilds the fork's list from its transcript's Task calls on its
// first call, TaskList returns it and TaskCreate continues its ids; and
// from then on the two lists are apart: A does not get the fork's task,
// and its own next task takes the same id independently. (The fork hook
// cannot add the list itself: Claude Code 2.1.328 runs it with source
// "fork" before the fork's transcript exists, and names no source.)
func TestFork(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := claudecode.New(t, claudecode.Options{Respond: p.Respond})
	a := uuid.NewString()

	p.Set(modelapi.NewScript(
		loadTools,
		modelapi.Call(taskCreate, map[string]any{"subject": "One"}),
		modelapi.Call(taskCreate, map[string]any{"subject": "Two"}),
		modelapi.Call(taskCreate, map[string]any{"subject": "Three"}),
		modelapi.Text("Three planned."),
	))
	h.Print(t, "Plan three things.", "--session-id", a)
	require.Equal(t, []string{"1 pending One", "2 pending Two", "3 pending Three"}, h.Daemon.Subjects(t, a))

	// The fork.
	n := len(h.API.Main())
	fork := p.Set(modelapi.NewScript(
		modelapi.Call(taskList, nil),
		modelapi.Call(taskCreate, map[string]any{"subject": "Four in the fork"}),
		modelapi.Text("Forked."),
	))
	res := h.Print(t, "Go on in a fork.", "--resume", a, "--fork-session")
	require.True(t, fork.Done(), h.API.Dump())
	f := res.SessionID
	require.NotEqual(t, a, f, "--fork-session kept the conversation id")

	hook := lastHook(t, h)
	t.Logf("fork: SessionStart source=%q session_id=%s (A=%s) CLAUDE_PID=%s CLAUDE_CODE_SESSION_ID=%s; MCP servers %+v",
		hook.Source, hook.SessionID, a, hook.ClaudePID, hook.EnvSessionID, h.MCPServers())
	t.Logf("fork: the transcript the hook was given (%s) held %d TaskCreate calls when it ran; the hook printed %d characters; its input: %s",
		hook.TranscriptPath, strings.Count(hook.Transcript, `"name":"`+taskCreate+`"`), len(hook.Output), hook.Input)
	assert.Equal(t, f, hook.SessionID, "the fork's SessionStart hook names the new conversation")

	main := since(h, n)
	require.Len(t, main, 3, h.API.Dump())
	history := main[0].AllText()
	for _, s := range []string{"#1 pending: One", "#2 pending: Two", "#3 pending: Three"} {
		assert.Contains(t, history, s, "the fork's first request holds A's Task results")
	}
	listed := toolJSON(t, main[1].PendingToolResults()[0])
	assert.Equal(t, []string{"1 pending One", "2 pending Two", "3 pending Three"}, tasksOf(t, listed), "the fork's TaskList")
	created := toolJSON(t, main[2].PendingToolResults()[0])
	assert.Contains(t, created["message"], "#4", "the fork's TaskCreate")

	assert.Equal(t, []string{"1 pending One", "2 pending Two", "3 pending Three", "4 pending Four in the fork"}, h.Daemon.Subjects(t, f), "the fork's list in the daemon")
	assert.Equal(t, []string{"1 pending One", "2 pending Two", "3 pending Three"}, h.Daemon.Subjects(t, a), "the source's list got the fork's task")

	// Back in A: its own #4.
	n = len(h.API.Main())
	back := p.Set(modelapi.NewScript(
		modelapi.Call(taskCreate, map[string]any{"subject": "Four in the source"}),
		modelapi.Text("Back."),
	))
	res = h.Print(t, "Go on in the source.", "--resume", a)
	require.True(t, back.Done(), h.API.Dump())
	assert.Equal(t, a, res.SessionID)
	main = since(h, n)
	require.Len(t, main, 2, h.API.Dump())
	created = toolJSON(t, main[1].PendingToolResults()[0])
	assert.Contains(t, created["message"], "#4", "the source's TaskCreate after the fork")
	assert.Equal(t, []string{"1 pending One", "2 pending Two", "3 pending Three", "4 pending Four in the source"}, h.Daemon.Subjects(t, a))
	assert.Equal(t, []string{"1 pending One", "2 pending Two", "3 pending Three", "4 pending Four in the fork"}, h.Daemon.Subjects(t, f))
}
