package codex_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/codex"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestHandoffFromClaudeCode ensures a named session carries a list from
// one host to another: Claude Code and Codex, each with the bridge given
// "--session NAME --create" (and the Codex hook "--session NAME"), on one
// daemon. Claude Code plans two tasks; Codex's TaskList returns them, its
// TaskCreate gets #3; a Codex resume shows the named list (the hook), and
// nothing is kept under the Codex thread's own id.
func TestHandoffFromClaudeCode(t *testing.T) {
	t.Parallel()
	const name = "e2e-handoff"
	var cp modelapi.Phases
	ch := claudecode.New(t, claudecode.Options{Respond: cp.Respond, NoHook: true, Session: name})
	cp.Set(modelapi.NewScript(
		modelapi.Call("ToolSearch", map[string]any{"query": "select:" + strings.Join([]string{taskCreate, taskList, taskGet, taskUpdate}, ","), "max_results": 5}),
		modelapi.Call(taskCreate, map[string]any{"subject": "Write the parser"}),
		modelapi.Call(taskCreate, map[string]any{"subject": "Test the parser"}),
		modelapi.Text("Planned."),
	))
	ch.Print(t, "Plan the parser work.", "--session-id", uuid.NewString())
	require.Equal(t, []string{"1 pending Write the parser", "2 pending Test the parser"}, ch.Daemon.Subjects(t, name))

	var p modelapi.Phases
	h := codex.New(t, codex.Options{Respond: p.Respond, Daemon: ch.Daemon,
		Session: name})
	p.Set(modelapi.NewScript(
		loadTools,
		modelapi.Call(taskList, nil),
		modelapi.Call(taskCreate, map[string]any{"subject": "Ship it"}),
		modelapi.Text("Three."),
	))
	a := h.Exec(t, "Where are we?").ThreadID
	main := h.API.Main()
	require.Len(t, main, 4, h.API.Dump())
	assert.Equal(t, []string{"1 pending Write the parser", "2 pending Test the parser"}, tasksOf(t, toolJSON(t, pending(t, main[2]))))
	assert.Contains(t, toolJSON(t, pending(t, main[3]))["message"], "#3")
	assert.Equal(t, []string{"1 pending Write the parser", "2 pending Test the parser", "3 pending Ship it"}, h.Daemon.Subjects(t, name))
	_, err := h.Daemon.Client(t).Head(t.Context(), a)
	assert.Error(t, err, "a session was made for the Codex thread though the bridge is bound to %s", name)

	p.Set(modelapi.NewScript(modelapi.Text("Seen.")))
	h.Resume(t, a, "Again.")
	hook := lastHook(t, h)
	assert.Equal(t, "resume", hook.Source)
	assert.Contains(t, hook.Context, "(tasksessiond session "+name+",")
	assert.Contains(t, strings.Join(hookContexts(h.API.LastMain(t)), "\n"), "#3 [pending] Ship it")
}
