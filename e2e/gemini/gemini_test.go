package gemini_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/e2e/gemini"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

// call is a Task call as Gemini's model makes it, with Gemini CLI's
// wait_for_previous, which its system prompt tells
// the model to set: the calls of one turn then run in order.
func call(name string, args map[string]any) modelapi.ToolUse {
	a := map[string]any{"wait_for_previous": true}
	for k, v := range args {
		a[k] = v
	}
	return modelapi.ToolUse{Name: name, Input: a}
}

// tasks returns "#id status subject" for each task the daemon holds.
func tasks(ts []tasksessiond.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = fmt.Sprintf("#%d %s %s", t.Taskid, t.Status, t.Subject)
	}
	return out
}

// pending returns the tool results the request answers, by tool.
func pending(r *modelapi.Request) map[string][]modelapi.Block {
	out := map[string][]modelapi.Block{}
	for _, b := range r.PendingToolResults() {
		out[b.Name] = append(out[b.Name], b)
	}
	return out
}

func TestFourTools(t *testing.T) {
	t.Parallel()
	h := gemini.New(t, gemini.Options{Respond: modelapi.NewScript(
		modelapi.Calls(
			call(gemini.TaskCreate, map[string]any{"subject": "Write the parser"}),
			call(gemini.TaskCreate, map[string]any{"subject": "Test the parser", "description": "table tests"}),
		),
		modelapi.Calls(
			call(gemini.TaskUpdate, map[string]any{"taskid": "#2", "status": "in_progress"}),
			call(gemini.TaskGet, map[string]any{"taskid": "2"}),
		),
		modelapi.Calls(call(gemini.TaskList, nil)),
		modelapi.Text("Planned."),
	).Respond})
	res := h.Run(t, "Plan the parser work.")
	main := h.API.Main()
	require.Len(t, main, 4, h.API.Dump())

	first := main[0]
	for _, name := range []string{gemini.TaskCreate, gemini.TaskList, gemini.TaskGet, gemini.TaskUpdate} {
		tool, ok := first.Tool(name)
		require.True(t, ok, "%s offered: %v", name, first.ToolNames())
		assert.Contains(t, string(tool.InputSchema), "wait_for_previous", "Gemini CLI adds it to %s", name)
	}

	created := pending(main[1])[gemini.TaskCreate]
	require.Len(t, created, 2)
	for i, b := range created {
		assert.False(t, b.IsError, b.Text)
		assert.Contains(t, b.Text, fmt.Sprintf("#%d", i+1))
	}
	p := pending(main[2])
	require.Len(t, p[gemini.TaskUpdate], 1)
	assert.False(t, p[gemini.TaskUpdate][0].IsError, p[gemini.TaskUpdate][0].Text)
	require.Len(t, p[gemini.TaskGet], 1)
	assert.False(t, p[gemini.TaskGet][0].IsError, p[gemini.TaskGet][0].Text)
	assert.Contains(t, p[gemini.TaskGet][0].Text, "table tests")
	listed := pending(main[3])[gemini.TaskList]
	require.Len(t, listed, 1)
	assert.Contains(t, listed[0].Text, "Write the parser")
	assert.Contains(t, listed[0].Text, "Test the parser")
	t.Logf("TaskList as the model read it:\n%s", listed[0].Text)

	// The list is the Gemini session's, named by its id.
	got := h.Daemon.Resume(t, res.SessionID)
	assert.Equal(t, []string{"#1 pending Write the parser", "#2 inprogress Test the parser"}, tasks(got.Tasks))
	starts := h.Hooks("SessionStart")
	require.Len(t, starts, 1)
	assert.Equal(t, "startup", starts[0].Source)
	assert.Equal(t, res.SessionID, starts[0].SessionID)
	assert.Equal(t, res.SessionID, starts[0].EnvSessionID)
	servers := h.MCPServers()
	require.Len(t, servers, 1)
	assert.Equal(t, "1", servers[0].GeminiCLI)
	assert.Equal(t, servers[0].PPID, starts[0].PPID, "the hook and the bridge share Gemini CLI as parent")
	// wait_for_previous went with every call, to the bridge and daemon.
	for _, u := range main[3].ToolUses("") {
		assert.Contains(t, string(u.Input), `"wait_for_previous":true`)
	}
}
