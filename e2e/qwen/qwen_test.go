package qwen_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/qwen"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

// load has the model load the Task tools: Qwen Code defers MCP tools
// behind tool_search.
var load = modelapi.Call("tool_search", map[string]any{"query": "select:" + qwen.TaskCreate + "," + qwen.TaskList + "," + qwen.TaskUpdate + "," + qwen.TaskGet})

// viaBridge is a call through Qwen Code's tool_call, as the model makes it
// for a deferred tool it has not loaded.
func viaBridge(name string, args map[string]any) modelapi.Reply {
	return modelapi.Call("tool_call", map[string]any{"name": name, "arguments": args})
}

// tasks returns "#id status subject" for each task.
func tasks(ts []tasksessiond.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = fmt.Sprintf("#%d %s %s", t.Taskid, t.Status, t.Subject)
	}
	return out
}

// since returns the main requests after the first n.
func since(h *qwen.Host, n int) []*modelapi.Request { return h.API.Main()[n:] }

// plan has the model make two tasks, one directly and one through the
// tool_call bridge.
func plan() *modelapi.Script {
	return modelapi.NewScript(
		load,
		modelapi.Call(qwen.TaskCreate, map[string]any{"subject": "Write the parser", "description": "by hand"}),
		viaBridge(qwen.TaskCreate, map[string]any{"subject": "Test the parser"}),
		modelapi.Text("Planned."),
	)
}

// TestStartupAndResume ensures a Qwen Code session's list is the daemon
// session named by the session's id (QWEN_CODE_SESSION_ID in the bridge's
// environment), that "qwen --resume ID" comes back to it with the list in
// front of the model (the SessionStart hook's context) and the next
// TaskCreate continuing the ids, and that a request holds the list once.
func TestStartupAndResume(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := qwen.New(t, qwen.Options{Respond: p.Respond})
	p.Set(plan())
	a := h.Run(t, "Plan the parser work.").SessionID
	assert.Equal(t, []string{"#1 pending Write the parser", "#2 pending Test the parser"}, tasks(h.Daemon.Resume(t, a).Tasks))
	starts := h.Hooks("SessionStart")
	require.Len(t, starts, 1)
	assert.Equal(t, "startup", starts[0].Source)
	assert.Equal(t, a, starts[0].SessionID)
	servers := h.Rec.MCPStarts()
	require.Len(t, servers, 1)
	assert.Equal(t, a, servers[0].Getenv("QWEN_CODE_SESSION_ID"))

	n := len(h.API.Main())
	resumed := p.Set(modelapi.NewScript(
		load,
		modelapi.Call(qwen.TaskCreate, map[string]any{"subject": "Ship it"}),
		modelapi.Text("Three tasks now."),
	))
	res := h.Run(t, "Where are we?", "--resume", a)
	assert.Equal(t, a, res.SessionID, "resume kept the session id")
	require.True(t, resumed.Done(), h.API.Dump())
	main := since(h, n)
	hook := h.Hooks("SessionStart")[1]
	assert.Equal(t, "resume", hook.Source)
	require.NotEmpty(t, hook.Context, "the resume hook gave the list")
	assert.Contains(t, hook.Context, "#2 [pending] Test the parser")
	assert.Contains(t, hook.Context, qwen.TaskCreate+" gets #3")
	assert.Contains(t, main[0].AllText(), hook.Context, "the hook's list reached the model")
	created := main[2].ToolResults(qwen.TaskCreate)
	require.NotEmpty(t, created)
	assert.Contains(t, created[len(created)-1].Text, "#3 pending: Ship it", "the ids continue")
	assert.Equal(t, []string{"#1 pending Write the parser", "#2 pending Test the parser", "#3 pending Ship it"}, tasks(h.Daemon.Resume(t, a).Tasks))

	// Qwen Code keeps a SessionStart hook's context beside the history,
	// not in it (nor in the chat record): each resume is given the list
	// again, and each request holds it once.
	p.Set(modelapi.NewScript(modelapi.Text("Nothing to do.")))
	h.Run(t, "Anything?", "--resume", a)
	again := h.Hooks("SessionStart")[2]
	require.Equal(t, "resume", again.Source)
	assert.Contains(t, again.Context, "#3 [pending] Ship it")
	last := h.API.Main()[len(h.API.Main())-1]
	assert.Equal(t, 1, strings.Count(last.AllText(), again.Context), "the list is in the request once")
}

// TestLostDatabase ensures a list whose database is lost is rebuilt, on
// resume, from the Task calls in Qwen Code's chat record (those made
// through the tool_call bridge too), with the same ids.
func TestLostDatabase(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := qwen.New(t, qwen.Options{Respond: p.Respond})
	p.Set(modelapi.NewScript(
		load,
		modelapi.Call(qwen.TaskCreate, map[string]any{"subject": "Write the parser"}),
		viaBridge(qwen.TaskCreate, map[string]any{"subject": "Test the parser"}),
		viaBridge(qwen.TaskUpdate, map[string]any{"taskid": 1, "status": "completed"}),
		modelapi.Text("Planned."),
	))
	a := h.Run(t, "Plan the parser work.").SessionID
	require.Equal(t, []string{"#1 completed Write the parser", "#2 pending Test the parser"}, tasks(h.Daemon.Resume(t, a).Tasks))

	h.Daemon.LoseDatabase(t)
	p.Set(modelapi.NewScript(
		load,
		modelapi.Call(qwen.TaskCreate, map[string]any{"subject": "Ship it"}),
		modelapi.Text("Done."),
	))
	h.Run(t, "Where are we?", "--resume", a)
	hook := h.Hooks("SessionStart")[1]
	assert.Contains(t, hook.Context, "#1 [completed] Write the parser", "the hook rebuilt the list from the chat record")
	assert.Equal(t, []string{"#1 completed Write the parser", "#2 pending Test the parser", "#3 pending Ship it"}, tasks(h.Daemon.Resume(t, a).Tasks))
}

// qwenRun bounds one run.
const qwenRun = 3 * time.Minute

// harnessWait waits (up to a minute) for cond.
func harnessWait(t *testing.T, cond func() bool) {
	t.Helper()
	harness.WaitFor(t, time.Minute, "the condition", cond)
}
