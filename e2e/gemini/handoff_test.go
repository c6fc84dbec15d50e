package gemini_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/codex"
	"github.com/tasksessiond/tasksessiond/e2e/gemini"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// A named session carries a list from Codex CLI to Gemini CLI: both
// bridges given "--session NAME --create", both hooks "--session NAME", one
// daemon. Codex plans two tasks; Gemini's startup hook shows them, its
// TaskList returns them, its TaskCreate gets #3; nothing is kept under the
// Gemini session's own id.
func TestHandoffFromCodex(t *testing.T) {
	t.Parallel()
	const name = "e2e-handoff-gemini"
	ch := codex.New(t, codex.Options{
		Respond: modelapi.NewScript(
			modelapi.Call(modelapi.ToolSearch, map[string]any{"query": "TaskCreate TaskList TaskGet TaskUpdate task list", "limit": 8}),
			modelapi.Call("mcp__tasks__TaskCreate", map[string]any{"subject": "Write the parser"}),
			modelapi.Call("mcp__tasks__TaskCreate", map[string]any{"subject": "Test the parser"}),
			modelapi.Text("Planned."),
		).Respond,
		Session: name,
	})
	ch.Exec(t, "Plan the parser work.")
	require.Equal(t, []string{"#1 pending Write the parser", "#2 pending Test the parser"}, tasks(ch.Daemon.Resume(t, name).Tasks))

	h := gemini.New(t, gemini.Options{Daemon: ch.Daemon,
		Session: name,
		Respond: modelapi.NewScript(
			modelapi.Calls(call(gemini.TaskList, nil)),
			modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Ship it"})),
			modelapi.Text("Three."),
		).Respond})
	res := h.Run(t, "Where are we?")
	m := h.API.Main()
	require.Len(t, m, 3)
	assert.Contains(t, m[0].LastUserText(), "(tasksessiond session "+name+",", "the startup hook shows the named list")
	list := result(t, m[1], gemini.TaskList)
	assert.Contains(t, list, "#1 [pending] Write the parser")
	assert.Contains(t, list, "#2 [pending] Test the parser")
	assert.Contains(t, result(t, m[2], gemini.TaskCreate), "#3 pending:")
	assert.Equal(t, []string{"#1 pending Write the parser", "#2 pending Test the parser", "#3 pending Ship it"}, tasks(h.Daemon.Resume(t, name).Tasks))
	_, err := h.Daemon.Client(t).Head(t.Context(), res.SessionID)
	assert.Error(t, err, "a session was made for the Gemini session though the bridge is bound to %s", name)
}
