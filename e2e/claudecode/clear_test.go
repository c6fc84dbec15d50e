package claudecode_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestClear ensures /clear in the interactive CLI starts the new
// conversation with an empty list of its own while the old one keeps its
// list: Claude Code keeps the same MCP server process through /clear, so
// the bridge must learn the new conversation's id from the SessionStart
// hook (source "clear"); the model's TaskList there shows no tasks and its
// TaskCreate gets #1; the daemon holds both lists apart; and resuming the
// old conversation later brings back its list, with the next id.
func TestClear(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := claudecode.New(t, claudecode.Options{Respond: p.Respond})
	a := uuid.NewString()
	term := h.Interactive(t, "--session-id", a)

	p.Set(modelapi.NewScript(
		loadTools,
		modelapi.Call(taskCreate, map[string]any{"subject": "A one"}),
		modelapi.Call(taskCreate, map[string]any{"subject": "A two"}),
		modelapi.Text("A planned."),
	))
	term.Submit("Plan A.")
	term.WaitForText(30*time.Second, "A planned.")
	require.Equal(t, []string{"1 pending A one", "2 pending A two"}, h.Daemon.Subjects(t, a))
	servers := h.MCPServers()
	require.Len(t, servers, 1)

	term.Submit("/clear")
	var clear claudecode.HookRun
	harness.WaitFor(t, 20*time.Second, "a SessionStart hook run with source clear", func() bool {
		for _, r := range h.Hooks() {
			if r.Source == "clear" {
				clear = r
			}
		}
		return clear.Source != ""
	})
	b := clear.SessionID
	t.Logf("/clear: SessionStart source=%q session_id=%s (A=%s) CLAUDE_PID=%s CLAUDE_CODE_SESSION_ID=%s; MCP servers %+v",
		clear.Source, b, a, clear.ClaudePID, clear.EnvSessionID, h.MCPServers())
	bound, _ := os.ReadFile(filepath.Join(h.Daemon.Dir, "bind", "claude-code-"+clear.ClaudePID))
	t.Logf("/clear: the MCP server's parent is pid %d, its env CLAUDE_PID is %q; the hook's binding file holds %q",
		servers[0].PPID, servers[0].ClaudePID, bound)
	require.NotEqual(t, a, b, "/clear kept the conversation id")
	assert.Equal(t, servers, h.MCPServers(), "Claude Code started another MCP server at /clear")
	_, err := os.Stat("/proc/" + strconv.Itoa(servers[0].PID))
	assert.NoError(t, err, "the MCP server process did not survive /clear")

	n := len(h.API.Main())
	after := p.Set(modelapi.NewScript(
		loadTools,
		modelapi.Call(taskList, nil),
		modelapi.Call(taskCreate, map[string]any{"subject": "B one"}),
		modelapi.Text("B planned."),
	))
	term.Submit("Plan B.")
	term.WaitForText(30*time.Second, "B planned.")
	require.True(t, after.Done(), h.API.Dump())
	main := since(h, n)
	require.Len(t, main, 4, h.API.Dump())
	assert.NotContains(t, main[0].ConversationText(), "A one", "the old conversation is in the new one's first request")
	listed := toolJSON(t, main[2].PendingToolResults()[0])
	assert.Empty(t, tasksOf(t, listed), "TaskList after /clear: the new conversation's list must be empty")
	created := toolJSON(t, main[3].PendingToolResults()[0])
	assert.Contains(t, created["message"], "#1", "TaskCreate after /clear")

	assert.Equal(t, []string{"1 pending A one", "2 pending A two"}, h.Daemon.Subjects(t, a), "A's list in the daemon")
	assert.Equal(t, []string{"1 pending B one"}, h.Daemon.Subjects(t, b), "the new conversation's list in the daemon")

	// Resume A, in print mode: A's list, and its next id.
	n = len(h.API.Main())
	back := p.Set(modelapi.NewScript(
		modelapi.Call(taskList, nil),
		modelapi.Call(taskCreate, map[string]any{"subject": "A three"}),
		modelapi.Text("A resumed."),
	))
	res := h.Print(t, "Back to A.", "--resume", a)
	require.True(t, back.Done(), h.API.Dump())
	assert.Equal(t, a, res.SessionID)
	main = since(h, n)
	require.Len(t, main, 3, h.API.Dump())
	ctx := hookContexts(main[0])
	require.NotEmpty(t, ctx, "no hook context when resuming A")
	assert.Contains(t, ctx[len(ctx)-1], "#2 [pending] A two")
	assert.NotContains(t, ctx[len(ctx)-1], "B one")
	listed = toolJSON(t, main[1].PendingToolResults()[0])
	assert.Equal(t, []string{"1 pending A one", "2 pending A two"}, tasksOf(t, listed), "TaskList in A resumed")
	created = toolJSON(t, main[2].PendingToolResults()[0])
	assert.Contains(t, created["message"], "#3", "TaskCreate in A resumed")
	assert.Equal(t, []string{"1 pending A one", "2 pending A two", "3 pending A three"}, h.Daemon.Subjects(t, a))
	assert.Equal(t, []string{"1 pending B one"}, h.Daemon.Subjects(t, b))
}
