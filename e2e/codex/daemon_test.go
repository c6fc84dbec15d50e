package codex_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/e2e/codex"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestDaemonKilled ensures a daemon killed hard (SIGKILL) between two
// "codex exec" turns loses nothing: the next turn (codex exec resume)
// gets a daemon on the same socket and database (the hook or the bridge
// starts one), its TaskCreate succeeds with the next id, and the list
// holds every task.
func TestDaemonKilled(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := codex.New(t, codex.Options{Respond: p.Respond})
	p.Set(modelapi.NewScript(loadTools, modelapi.Call(taskCreate, map[string]any{"subject": "One"}), modelapi.Text("Planned.")))
	a := h.Exec(t, "Plan.").ThreadID
	before := h.Daemon.Status(t)
	h.Daemon.Kill(t)

	n := len(h.API.Main())
	p.Set(modelapi.NewScript(
		modelapi.Call(taskCreate, map[string]any{"subject": "Two"}),
		modelapi.Call(taskList, nil),
		modelapi.Text("Still here."),
	))
	h.Resume(t, a, "Go on.")
	main := since(h, n)
	require.Len(t, main, 3, h.API.Dump())
	assert.Contains(t, toolJSON(t, pending(t, main[1]))["message"], "#2")
	assert.Equal(t, []string{"1 pending One", "2 pending Two"}, tasksOf(t, toolJSON(t, pending(t, main[2]))))

	after := h.Daemon.Status(t)
	assert.NotEqual(t, before.PID, after.PID, "the killed daemon answers")
	assert.Equal(t, h.Daemon.DB, after.Database)
	assert.Equal(t, []string{"1 pending One", "2 pending Two"}, h.Daemon.Subjects(t, a))
}

// TestNoDaemonAtStart ensures Codex started with no daemon running (and
// no hook to start one) still has the tools: the bridge lists them without
// a daemon, tool_search loads them, and the first TaskCreate starts the
// daemon (detached, on the socket and database of the server's env in
// config.toml) and succeeds.
func TestNoDaemonAtStart(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := codex.New(t, codex.Options{Respond: p.Respond, NoDaemon: true, NoHook: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := client.Dial(ctx, h.Daemon.Socket)
	require.Error(t, err, "a daemon answers before the test started one")

	p.Set(modelapi.NewScript(loadTools, modelapi.Call(taskCreate, map[string]any{"subject": "One"}), modelapi.Text("Planned.")))
	a := h.Exec(t, "Plan.").ThreadID
	main := h.API.Main()
	require.Len(t, main, 3, h.API.Dump())
	for _, name := range []string{taskCreate, taskList, taskGet, taskUpdate} {
		assert.True(t, main[1].HasTool(name), "%s not found by tool_search", name)
	}
	assert.Contains(t, toolJSON(t, pending(t, main[2]))["message"], "#1")
	assert.Empty(t, h.Hooks())

	st := h.Daemon.Status(t)
	assert.Equal(t, h.Daemon.DB, st.Database)
	assert.Equal(t, []string{"1 pending One"}, h.Daemon.Subjects(t, a))
}
