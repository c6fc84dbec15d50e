package claudecode_test

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

// The MCP tools as Claude Code names them: mcp__<server>__<tool>.
const (
	taskCreate = "mcp__tasks__TaskCreate"
	taskList   = "mcp__tasks__TaskList"
	taskGet    = "mcp__tasks__TaskGet"
	taskUpdate = "mcp__tasks__TaskUpdate"
)

// loadTools is the model's first move: Claude Code offers MCP tools as
// deferred tools, by name only, and the model loads their schemas with
// ToolSearch before calling them.
var loadTools = modelapi.Call("ToolSearch", map[string]any{
	"query": "select:" + strings.Join([]string{taskCreate, taskList, taskGet, taskUpdate}, ","), "max_results": 5,
})

// planScript has the model load the tools and call all four, one a turn.
func planScript() *modelapi.Script {
	return modelapi.NewScript(
		loadTools,
		modelapi.Call(taskCreate, map[string]any{"subject": "Write the parser"}),
		modelapi.Call(taskCreate, map[string]any{"subject": "Test the parser", "description": "fuzz it too"}),
		modelapi.Call(taskUpdate, map[string]any{"taskid": 1, "status": "in_progress"}),
		modelapi.Call(taskGet, map[string]any{"taskid": "#2"}),
		modelapi.Call(taskList, nil),
		modelapi.Text("Two tasks planned."),
	)
}

// toolJSON reads a Task tool result as the model read it (its text: the
// bridge sends no structured result) into the fields the tests assert on
// (harness.ResultFields).
func toolJSON(t *testing.T, b modelapi.Block) map[string]any {
	t.Helper()
	require.False(t, b.IsError, "%s returned an error result: %s", b.Name, b.Text)
	return harness.ResultFields(claudecode.StripReminders(b.Text))
}

// tasksOf returns "taskid status subject" for each task of a TaskList result.
func tasksOf(t *testing.T, v map[string]any) []string {
	t.Helper()
	list, ok := v["tasks"].([]any)
	require.True(t, ok, "no tasks in %v", v)
	var out []string
	for _, x := range list {
		task := x.(map[string]any)
		out = append(out, fmt.Sprintf("%v %s %s", task["taskid"], task["status"], task["subject"]))
	}
	return out
}

// TestFourTools ensures each Task tool called by the model through the MCP
// bridge reaches the daemon, and that each result reaches the model in the
// next request; and that the tasks live in the daemon session bound to
// Claude Code's session id.
func TestFourTools(t *testing.T) {
	t.Parallel()
	script := planScript()
	h := claudecode.New(t, claudecode.Options{Respond: script.Respond})
	id := uuid.NewString()

	res := h.Print(t, "Plan the parser work.", "--session-id", id)
	assert.Equal(t, id, res.SessionID)
	assert.Equal(t, "Two tasks planned.", res.Result)
	require.True(t, script.Done(), "the script was not played to its end:\n%s", h.API.Dump())
	assert.Empty(t, h.API.Unscripted())

	main := h.API.Main()
	require.Len(t, main, 7, h.API.Dump())
	assert.Contains(t, main[0].LastUserText(), "Plan the parser work.")

	// ToolSearch loaded the bridge's tools: its result refers to them
	// (tool_reference blocks), and from then on the request offers them
	// with the bridge's schemas.
	found := main[1].PendingToolResults()
	require.Len(t, found, 1)
	assert.Equal(t, "ToolSearch", found[0].Name)
	for _, name := range []string{taskCreate, taskList, taskGet, taskUpdate} {
		assert.Contains(t, string(found[0].Raw), name)
		assert.False(t, main[0].HasTool(name), "%s offered before ToolSearch", name)
		assert.True(t, main[1].HasTool(name), "%s not offered after ToolSearch", name)
	}
	create, _ := main[1].Tool(taskCreate)
	assert.Contains(t, string(create.InputSchema), `"subject"`)

	// Each call's result is in the very next request.
	for i, want := range []string{taskCreate, taskCreate, taskUpdate, taskGet, taskList} {
		got := main[i+2].PendingToolResults()
		require.Len(t, got, 1, "request %d", main[i+2].Seq)
		assert.Equal(t, want, got[0].Name, "request %d", main[i+2].Seq)
	}

	last := main[len(main)-1]
	created := last.ToolResults(taskCreate)
	require.Len(t, created, 2)
	first, second := toolJSON(t, created[0]), toolJSON(t, created[1])
	assert.Contains(t, first["message"], "#1")
	assert.Contains(t, second["message"], "#2")
	assert.Equal(t, "Write the parser", first["task"].(map[string]any)["subject"])
	assert.Equal(t, "Test the parser", second["task"].(map[string]any)["subject"])

	updated := toolJSON(t, last.ToolResults(taskUpdate)[0])
	assert.Equal(t, "inprogress", updated["task"].(map[string]any)["status"])

	got := toolJSON(t, last.ToolResults(taskGet)[0])
	assert.Equal(t, "Test the parser", got["task"].(map[string]any)["subject"])
	assert.Equal(t, "fuzz it too", got["task"].(map[string]any)["description"])

	listed := toolJSON(t, last.ToolResults(taskList)[0])
	assert.Equal(t, []string{"1 inprogress Write the parser", "2 pending Test the parser"}, tasksOf(t, listed))

	// The daemon holds them, in the session named by Claude Code's id.
	s := h.Daemon.Resume(t, id)
	assert.Equal(t, id, s.Session.ID)
	require.Len(t, s.Tasks, 2)
	assert.Equal(t, "inprogress", string(s.Tasks[0].Status))
	assert.Equal(t, "Test the parser", s.Tasks[1].Subject)
	assert.Equal(t, 3, s.NextTaskid)

	// The bridge is silent on stderr unless something is wrong; Claude
	// Code stops it with SIGINT at exit, which is nothing wrong.
	assert.Empty(t, h.MCPStderr(), "the bridge wrote to stderr in a run where nothing went wrong")
}

// TestResume ensures "claude -p --resume" comes back to the same list: the
// hook puts it in front of the model, TaskList returns it, and the next
// TaskCreate continues the ids.
func TestResume(t *testing.T) {
	t.Parallel()
	plan := planScript()
	resumed := modelapi.NewScript(
		modelapi.Call(taskList, nil),
		modelapi.Call(taskCreate, map[string]any{"subject": "Ship it"}),
		modelapi.Text("Three tasks now."),
	)
	var second atomic.Bool
	h := claudecode.New(t, claudecode.Options{Respond: func(r *modelapi.Request) (modelapi.Reply, bool) {
		if second.Load() {
			return resumed.Respond(r)
		}
		return plan.Respond(r)
	}})
	id := uuid.NewString()
	h.Print(t, "Plan the parser work.", "--session-id", id)
	require.True(t, plan.Done())
	before := len(h.API.Main())
	second.Store(true)

	res := h.Print(t, "Where are we?", "--resume", id)
	assert.Equal(t, id, res.SessionID)
	assert.Equal(t, "Three tasks now.", res.Result)
	require.True(t, resumed.Done())

	main := h.API.Main()[before:]
	require.Len(t, main, 3, h.API.Dump())

	// The resume hook's context: the list, in the first request's new user turn.
	hook := main[0].LastUserText()
	assert.Contains(t, hook, "Where are we?")
	assert.Contains(t, hook, "Write the parser", "the SessionStart:resume hook's list is not in the resumed turn")
	assert.Contains(t, hook, "Test the parser")

	listed := toolJSON(t, main[1].PendingToolResults()[0])
	assert.Equal(t, []string{"1 inprogress Write the parser", "2 pending Test the parser"}, tasksOf(t, listed))
	created := toolJSON(t, main[2].PendingToolResults()[0])
	assert.Contains(t, created["message"], "#3")

	s := h.Daemon.Resume(t, id)
	require.Len(t, s.Tasks, 3)
	assert.Equal(t, "Ship it", s.Tasks[2].Subject)
}
