package copilot_test

import (
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/copilot"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	hostcopilot "github.com/tasksessiond/tasksessiond/internal/host/copilot"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

// No daemon at start: the sessionStart hook starts it (on the configured
// socket and database) and the first TaskCreate succeeds. Killed with
// SIGKILL between two runs: the resumed run starts it again, the list is
// there and the next TaskCreate gets the next id.
func TestDaemonDownAndKilled(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := copilot.New(t, copilot.Options{Respond: p.Respond, NoDaemon: true})
	p.Set(modelapi.NewScript(modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Alpha one"}), modelapi.Text("ok")))
	a := h.Run(t, "Plan.").SessionID
	m := h.API.Main()
	require.Len(t, m, 2)
	assert.Contains(t, m[1].ToolResults(copilot.TaskCreate)[0].Text, "#1 pending:")
	st := h.Daemon.Status(t)
	assert.Equal(t, h.Daemon.DB, st.Database, "the daemon started on the configured database")
	require.NotZero(t, st.PID)
	require.NoError(t, syscall.Kill(st.PID, syscall.SIGKILL))

	n := len(m)
	p.Set(modelapi.NewScript(modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Alpha two"}), modelapi.Text("ok")))
	h.Run(t, "Go on.", "--resume", a)
	m = h.API.Main()[n:]
	require.Len(t, m, 2)
	assert.Contains(t, m[0].AllText(), "#1 [pending] Alpha one", "the resume hook (which started a daemon again) shows the list")
	created := m[1].ToolResults(copilot.TaskCreate)
	assert.Contains(t, created[len(created)-1].Text, "#2 pending:")
	assert.Equal(t, []string{"#1 pending Alpha one", "#2 pending Alpha two"}, tasks(h.Daemon.Resume(t, a).Tasks))
}

// Two Copilot CLI sessions at once, on one daemon: each has its own list,
// named by its own id.
func TestTwoSessionsAtOnce(t *testing.T) {
	t.Parallel()
	h := copilot.New(t, copilot.Options{Respond: modelapi.Steps(
		&modelapi.Step{Match: modelapi.LastUserContains("Plan A."), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Alpha one"})
		}},
		&modelapi.Step{Match: modelapi.LastUserContains("Plan B."), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Beta one"})
		}},
		&modelapi.Step{Match: modelapi.IsKind(modelapi.KindMain), Reply: func(*modelapi.Request) modelapi.Reply { return modelapi.Text("Noted.") }},
	)})
	var wg sync.WaitGroup
	ids := make([]string, 2)
	for i, prompt := range []string{"Plan A.", "Plan B."} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := h.Command(t, copilotRun, h.Args(prompt)...)
			assert.NoError(t, out.Err, out.Stderr)
			ids[i] = sessionOf(out.Stdout)
		}()
	}
	wg.Wait()
	require.NotEmpty(t, ids[0])
	require.NotEmpty(t, ids[1])
	require.NotEqual(t, ids[0], ids[1])
	assert.Equal(t, []string{"#1 pending Alpha one"}, tasks(h.Daemon.Resume(t, ids[0]).Tasks))
	assert.Equal(t, []string{"#1 pending Beta one"}, tasks(h.Daemon.Resume(t, ids[1]).Tasks))
}

// A session with 200 tasks (made through the daemon's client, under the id
// the session is then started with, --session-id): TaskList's result stays
// within what Copilot CLI keeps in the context (20,480 bytes) and names the
// last task; the resume hook's list within the hook's bound.
func TestLargeList(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := copilot.New(t, copilot.Options{Respond: p.Respond})
	id := uuid.NewString()
	h.Daemon.CreateTasks(t, id, 200, 120, "Task number %03d of the big plan")
	p.Set(modelapi.NewScript(modelapi.Call(copilot.TaskList, map[string]any{}), modelapi.Text("ok")))
	h.Run(t, "List.", "--session-id", id)
	m := h.API.Main()
	require.Len(t, m, 2)
	listed := m[1].ToolResults(copilot.TaskList)
	require.Len(t, listed, 1)
	text := listed[0].Text
	t.Logf("TaskList of 200 tasks reads %d bytes: %.300s…", len(text), text)
	assert.LessOrEqual(t, len(text), hostcopilot.ResultBytes)
	assert.Contains(t, text, "#200")
	starts := h.Hooks("source")
	require.Len(t, starts, 1)
	ctx := hookContext(t, starts[0].Output)
	t.Logf("the startup hook's list reads %d characters", len([]rune(ctx)))
	assert.LessOrEqual(t, len([]rune(ctx)), tools.MaxHookChars)
	assert.Contains(t, m[0].AllText(), ctx, "the hook's list reached the model")
	assert.True(t, strings.Contains(ctx, "200"), ctx)
}
