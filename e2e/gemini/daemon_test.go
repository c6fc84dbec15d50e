package gemini_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/e2e/gemini"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/wire"
)

// No daemon at start: the startup hook starts it (on the configured socket
// and database) and the first TaskCreate succeeds. Killed with SIGKILL
// between two runs: the resumed run's hook starts it again, the list is
// there and the next TaskCreate gets the next id.
func TestDaemonDownAndKilled(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := gemini.New(t, gemini.Options{Respond: p.Respond, NoDaemon: true})
	p.Set(modelapi.NewScript(modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Alpha one"})), modelapi.Text("ok")))
	a := h.Run(t, "Plan.")
	m := h.API.Main()
	require.Len(t, m, 2)
	assert.Contains(t, result(t, m[1], gemini.TaskCreate), "#1 pending:")
	st := h.Daemon.Status(t)
	assert.Equal(t, h.Daemon.DB, st.Database, "the daemon started on the configured database")

	require.NotZero(t, st.PID)
	require.NoError(t, syscall.Kill(st.PID, syscall.SIGKILL))

	n := len(m)
	p.Set(modelapi.NewScript(modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Alpha two"})), modelapi.Text("ok")))
	h.Run(t, "Go on.", "--resume", a.SessionID)
	m = h.API.Main()[n:]
	require.Len(t, m, 2)
	assert.Contains(t, m[0].LastUserText(), "#1 [pending] Alpha one", "the resume hook (which started a daemon again) shows the list")
	assert.Contains(t, result(t, m[1], gemini.TaskCreate), "#2 pending:")
	assert.Equal(t, []string{"#1 pending Alpha one", "#2 pending Alpha two"}, tasks(h.Daemon.Resume(t, a.SessionID).Tasks))
}

// 300 open tasks (made through the daemon's client) in a Gemini session:
// at resume the hook's context reaches the model within 9,500 characters,
// naming every open task with its status and subject.
func TestLargeListResume(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := gemini.New(t, gemini.Options{Respond: p.Respond})
	p.Set(modelapi.NewScript(modelapi.Text("ok")))
	a := h.Run(t, "Hello.")
	c := h.Daemon.Client(t)
	_, err := c.CreateSession(t.Context(), wire.CreateSession{SessionID: a.SessionID})
	require.NoError(t, err)
	var subjects []string
	for i := 1; i <= 300; i++ {
		subjects = append(subjects, fmt.Sprintf("Step %d", i))
		_, err := c.CallTool(t.Context(), client.ToolCall{SessionID: a.SessionID, Name: "TaskCreate", Arguments: map[string]any{"subject": subjects[i-1], "description": strings.Repeat("detail ", 30)}})
		require.NoError(t, err)
	}
	n := len(h.API.Main())
	p.Set(modelapi.NewScript(modelapi.Text("ok")))
	h.Run(t, "Go on.", "--resume", a.SessionID)
	m := h.API.Main()[n:]
	require.Len(t, m, 1)
	prompt := m[0].LastUserText()
	start, end := strings.Index(prompt, "<hook_context>"), strings.Index(prompt, "</hook_context>")
	require.True(t, start >= 0 && end > start, prompt)
	ctx := prompt[start+len("<hook_context>") : end]
	assert.LessOrEqual(t, len([]rune(ctx)), 9500)
	for i, s := range subjects {
		assert.Contains(t, ctx, fmt.Sprintf("#%d [pending] %s\n", i+1, s))
	}
	starts := h.Hooks("SessionStart")
	require.Len(t, starts, 2)
	assert.Equal(t, ctx, starts[1].Context, "verbatim, as the hook gave it")
}

// No daemon and no hook: Gemini CLI lists the four tools anyway (the
// bridge's definitions are built in), and the first TaskCreate starts the
// daemon on the configured socket and database.
func TestNoDaemonNoHook(t *testing.T) {
	t.Parallel()
	h := gemini.New(t, gemini.Options{NoDaemon: true, NoHook: true, Respond: modelapi.NewScript(
		modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Alpha one"})),
		modelapi.Text("ok"),
	).Respond})
	h.Run(t, "Plan.")
	m := h.API.Main()
	require.Len(t, m, 2)
	for _, name := range []string{gemini.TaskCreate, gemini.TaskList, gemini.TaskGet, gemini.TaskUpdate} {
		assert.True(t, m[0].HasTool(name), name)
	}
	assert.Contains(t, result(t, m[1], gemini.TaskCreate), "#1 pending:")
	assert.Equal(t, h.Daemon.DB, h.Daemon.Status(t).Database)
}
