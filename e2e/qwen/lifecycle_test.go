package qwen_test

import (
	"encoding/json"
	"sync"
	"syscall"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/qwen"
	hostqwen "github.com/tasksessiond/tasksessiond/internal/host/qwen"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

// No daemon at start: the SessionStart hook starts it (on the configured
// socket and database) and the first TaskCreate succeeds. Killed with
// SIGKILL between two runs: the resumed run starts it again, the list is
// there and the next TaskCreate gets the next id.
func TestDaemonDownAndKilled(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := qwen.New(t, qwen.Options{Respond: p.Respond, NoDaemon: true})
	p.Set(modelapi.NewScript(viaBridge(qwen.TaskCreate, map[string]any{"subject": "Alpha one"}), modelapi.Text("ok")))
	a := h.Run(t, "Plan.").SessionID
	m := h.API.Main()
	require.Len(t, m, 2)
	assert.Contains(t, m[1].ToolResults("tool_call")[0].Text, "#1 pending:")
	st := h.Daemon.Status(t)
	assert.Equal(t, h.Daemon.DB, st.Database, "the daemon started on the configured database")
	require.NotZero(t, st.PID)
	require.NoError(t, syscall.Kill(st.PID, syscall.SIGKILL))

	n := len(m)
	p.Set(modelapi.NewScript(viaBridge(qwen.TaskCreate, map[string]any{"subject": "Alpha two"}), modelapi.Text("ok")))
	h.Run(t, "Go on.", "--resume", a)
	m = h.API.Main()[n:]
	require.Len(t, m, 2)
	assert.Contains(t, m[0].AllText(), "#1 [pending] Alpha one", "the resume hook (which started a daemon again) shows the list")
	created := m[1].ToolResults("tool_call")
	assert.Contains(t, created[len(created)-1].Text, "#2 pending:")
	assert.Equal(t, []string{"#1 pending Alpha one", "#2 pending Alpha two"}, tasks(h.Daemon.Resume(t, a).Tasks))
}

// Two Qwen Code sessions at once, on one daemon: each has its own list,
// named by its own id.
func TestTwoSessionsAtOnce(t *testing.T) {
	t.Parallel()
	h := qwen.New(t, qwen.Options{Respond: modelapi.Steps(
		&modelapi.Step{Match: modelapi.LastUserContains("Plan A."), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return viaBridge(qwen.TaskCreate, map[string]any{"subject": "Alpha one"})
		}},
		&modelapi.Step{Match: modelapi.LastUserContains("Plan B."), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return viaBridge(qwen.TaskCreate, map[string]any{"subject": "Beta one"})
		}},
		&modelapi.Step{Match: modelapi.IsKind(modelapi.KindMain), Reply: func(*modelapi.Request) modelapi.Reply { return modelapi.Text("Noted.") }},
	)})
	var wg sync.WaitGroup
	ids := make([]string, 2)
	for i, prompt := range []string{"Plan A.", "Plan B."} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := h.Command(t, qwenRun, "--auth-type", "openai", "--approval-mode", "yolo", "-o", "stream-json", "-p", prompt)
			assert.NoError(t, out.Err, out.Stderr)
			for _, line := range harness.JSONLines(out.Stdout) {
				var e qwen.Event
				if json.Unmarshal(line, &e) == nil && e.SessionID != "" {
					ids[i] = e.SessionID
					break
				}
			}
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
// the session is then started with, --session-id): the startup hook's list
// stays within its bound and reaches the model; TaskList's result stays
// within what Qwen Code shows whole (25,000 characters) and names the last
// task.
func TestLargeList(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := qwen.New(t, qwen.Options{Respond: p.Respond})
	id := uuid.NewString()
	h.Daemon.CreateTasks(t, id, 200, 120, "Task number %03d of the big plan")
	p.Set(modelapi.NewScript(viaBridge(qwen.TaskList, map[string]any{}), modelapi.Text("ok")))
	h.Run(t, "List.", "--session-id", id)
	m := h.API.Main()
	require.Len(t, m, 2)
	listed := m[1].ToolResults("tool_call")
	require.Len(t, listed, 1)
	text := listed[0].Text
	t.Logf("TaskList of 200 tasks reads %d bytes: %.300s…", len(text), text)
	assert.LessOrEqual(t, len(text), hostqwen.ResultBytes)
	assert.Contains(t, text, "#200")
	starts := h.Hooks("SessionStart")
	require.Len(t, starts, 1)
	t.Logf("the startup hook's list reads %d characters", len([]rune(starts[0].Context)))
	assert.LessOrEqual(t, len([]rune(starts[0].Context)), tools.MaxHookChars)
	assert.Contains(t, m[0].AllText(), starts[0].Context, "the hook's list reached the model")
}
