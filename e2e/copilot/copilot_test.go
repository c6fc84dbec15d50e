package copilot_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/e2e/copilot"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

// tasks returns "#id status subject" for each task.
func tasks(ts []tasksessiond.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = fmt.Sprintf("#%d %s %s", t.Taskid, t.Status, t.Subject)
	}
	return out
}

func plan() *modelapi.Script {
	return modelapi.NewScript(
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Write the parser", "description": "by hand"}),
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Test the parser"}),
		modelapi.Text("Planned."),
	)
}

// TestStartupAndResume ensures a Copilot CLI session's list is the daemon
// session named by the session's id (COPILOT_AGENT_SESSION_ID in the
// bridge's environment, and each call's _meta by the preMcpToolCall hook),
// that the model sees the tools as tasks-TaskCreate and so on, and that
// "copilot --resume ID" comes back to the list: the sessionStart hook puts
// it in front of the model and the next TaskCreate continues the ids.
func TestStartupAndResume(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := copilot.New(t, copilot.Options{Respond: p.Respond})
	p.Set(plan())
	a := h.Run(t, "Plan the parser work.").SessionID
	require.NotEmpty(t, a)
	first := h.API.Main()[0]
	for _, name := range []string{copilot.TaskCreate, copilot.TaskList, copilot.TaskGet, copilot.TaskUpdate} {
		assert.True(t, first.HasTool(name), "%s offered: %v", name, first.ToolNames())
	}
	assert.Equal(t, []string{"#1 pending Write the parser", "#2 pending Test the parser"}, tasks(h.Daemon.Resume(t, a).Tasks))
	servers := h.Rec.MCPStarts()
	require.Len(t, servers, 1)
	assert.Equal(t, a, servers[0].Getenv("COPILOT_AGENT_SESSION_ID"))
	metas := h.Hooks("serverName")
	require.Len(t, metas, 2, "preMcpToolCall ran for each call")
	assert.Contains(t, metas[0].Output, `"copilot/sessionId":"`+a+`"`)

	n := len(h.API.Main())
	resumed := p.Set(modelapi.NewScript(
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Ship it"}),
		modelapi.Text("Three tasks now."),
	))
	res := h.Run(t, "Where are we?", "--resume", a)
	assert.Equal(t, a, res.SessionID, "resume kept the session id")
	require.True(t, resumed.Done(), h.API.Dump())
	main := h.API.Main()[n:]
	starts := h.Hooks("source")
	require.Len(t, starts, 2)
	assert.Equal(t, "resume", starts[1].Source)
	ctx := hookContext(t, starts[1].Output)
	require.NotEmpty(t, ctx, "the resume hook gave the list")
	assert.Contains(t, ctx, "#2 [pending] Test the parser")
	assert.Contains(t, ctx, copilot.TaskCreate+" gets #3")
	assert.Contains(t, main[0].AllText(), ctx, "the hook's list reached the model")
	created := main[1].ToolResults(copilot.TaskCreate)
	require.NotEmpty(t, created)
	assert.Contains(t, created[len(created)-1].Text, "#3 pending: Ship it", "the ids continue")
	assert.Equal(t, []string{"#1 pending Write the parser", "#2 pending Test the parser", "#3 pending Ship it"}, tasks(h.Daemon.Resume(t, a).Tasks))

	// Resumed again: the list is in the request once.
	p.Set(modelapi.NewScript(modelapi.Text("Nothing to do.")))
	h.Run(t, "Anything?", "--resume", a)
	last := h.API.Main()[len(h.API.Main())-1]
	assert.Equal(t, 1, strings.Count(last.AllText(), "#3 [pending] Ship it\n"), "the list is in the request once:\n%s", last.AllText())
}

// hookContext is a hook's additionalContext.
func hookContext(t *testing.T, out string) string {
	t.Helper()
	var o struct {
		AdditionalContext string `json:"additionalContext"`
	}
	if strings.TrimSpace(out) == "" {
		return ""
	}
	require.NoError(t, jsonUnmarshal(out, &o), out)
	return o.AdditionalContext
}

// TestLostDatabase ensures a list whose database is lost is rebuilt from
// the Task calls in Copilot CLI's events.jsonl, with the same ids.
func TestLostDatabase(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := copilot.New(t, copilot.Options{Respond: p.Respond})
	p.Set(modelapi.NewScript(
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Write the parser"}),
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Test the parser"}),
		modelapi.Call(copilot.TaskUpdate, map[string]any{"taskid": 1, "status": "completed"}),
		modelapi.Text("Planned."),
	))
	a := h.Run(t, "Plan the parser work.").SessionID
	require.Equal(t, []string{"#1 completed Write the parser", "#2 pending Test the parser"}, tasks(h.Daemon.Resume(t, a).Tasks))

	h.Daemon.LoseDatabase(t)
	p.Set(modelapi.NewScript(
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Ship it"}),
		modelapi.Text("Done."),
	))
	h.Run(t, "Where are we?", "--resume", a)
	starts := h.Hooks("source")
	require.Len(t, starts, 2)
	assert.Contains(t, hookContext(t, starts[1].Output), "#1 [completed] Write the parser", "the hook rebuilt the list from events.jsonl")
	assert.Equal(t, []string{"#1 completed Write the parser", "#2 pending Test the parser", "#3 pending Ship it"}, tasks(h.Daemon.Resume(t, a).Tasks))
}

// TestLostDatabaseBridge ensures the bridge alone (setup --no-hook)
// rebuilds a lost list from events.jsonl on the session's first call,
// before that call: the next TaskCreate continues the ids.
func TestLostDatabaseBridge(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := copilot.New(t, copilot.Options{Respond: p.Respond, NoHook: true})
	p.Set(modelapi.NewScript(
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Write the parser"}),
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Test the parser"}),
		modelapi.Text("Planned."),
	))
	a := h.Run(t, "Plan the parser work.").SessionID
	require.Empty(t, h.Rec.Hooks(), "no hook is set up")

	h.Daemon.LoseDatabase(t)
	p.Set(modelapi.NewScript(
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Ship it"}),
		modelapi.Text("Done."),
	))
	h.Run(t, "Go on.", "--resume", a)
	last := h.API.Main()[len(h.API.Main())-1]
	created := last.ToolResults(copilot.TaskCreate)
	require.NotEmpty(t, created)
	assert.Contains(t, created[len(created)-1].Text, "#3 pending: Ship it", "the list was rebuilt before the call")
	assert.Equal(t, []string{"#1 pending Write the parser", "#2 pending Test the parser", "#3 pending Ship it"}, tasks(h.Daemon.Resume(t, a).Tasks))
}
