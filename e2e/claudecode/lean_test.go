package claudecode_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestLeanSession ensures the standard session of issue 40 (20 creates, a
// list, 40 status updates, a list) costs the model at most 13,000 bytes in
// its final request and less than Claude Code's own Task tools on the same
// plan, in the final request and summed over the session (both measured
// here, the same way); that a status update reads at most 100 bytes; and
// that TaskList shows the tasks in taskid order.
func TestLeanSession(t *testing.T) {
	t.Parallel()
	ours := func(tool string) string { return "mcp__tasks__" + tool }
	m, main := standardSession(t, claudecode.Options{}, loadTools, harness.StandardCalls(ours), func(n string) bool { return strings.HasPrefix(n, "mcp__tasks__") })
	last := main[len(main)-1]
	final, cumulated := m.CostOf(last), m.Cumulated(main)
	t.Logf("Claude Code %s, standard session: final request %s; cumulated over %d requests %d bytes",
		claudecode.Version, final, len(main), cumulated)
	assert.LessOrEqual(t, final.Total(), harness.LeanFinalBudget, "the final request's cost")
	assert.Less(t, cumulated, harness.LeanCumulatedBudget, "the session's cumulated cost")

	updates := last.ToolResults(taskUpdate)
	require.Len(t, updates, 40)
	first := m.ResultText(updates[0])
	t.Logf("a status update at 20 open tasks reads (%d bytes): %s", len(first), first)
	assert.LessOrEqual(t, len(first), harness.LeanUpdateBudget, "a status update's result: %s", first)
	assert.Equal(t, "#1 inprogress: "+harness.StandardPlan()[0].Subject+"\n19 pending, inprogress #1", first)

	lists := last.ToolResults(taskList)
	require.Len(t, lists, 2)
	for _, l := range lists {
		t.Logf("TaskList reads (%d bytes): %.200q", len(m.ResultText(l)), m.ResultText(l))
		assert.Equal(t, 20, strings.Count(m.ResultText(l), "\n\tMove the "), "every task with its description")
	}
	assert.NoError(t, harness.TaskidOrder(m.ResultText(lists[1]), 20))

	// Claude Code's own Task tools (deferred too, loaded with ToolSearch;
	// TaskUpdate takes a string taskId), on the same plan, in a Claude Code
	// not set up for tasksessiond (setup denies these tools).
	own := func(tool string) string { return tool }
	loadOwn := modelapi.Call("ToolSearch", map[string]any{"query": "select:TaskCreate,TaskList,TaskGet,TaskUpdate", "max_results": 5})
	calls := harness.StandardCallsAs(own, func(id int, status string) map[string]any {
		return map[string]any{"taskId": strconv.Itoa(id), "status": status}
	})
	om, omain := standardSession(t, claudecode.Options{NoSetup: true}, loadOwn, calls, func(n string) bool {
		return slices.Contains([]string{"TaskCreate", "TaskList", "TaskGet", "TaskUpdate"}, n)
	})
	olast := omain[len(omain)-1]
	for _, b := range olast.ToolResults("") {
		require.False(t, b.IsError, "%s: %s", b.Name, b.Text)
	}
	ofinal, ocumulated := om.CostOf(olast), om.Cumulated(omain)
	t.Logf("Claude Code %s's own Task tools, the same session: final request %s; cumulated over %d requests %d bytes; a status update reads %q",
		claudecode.Version, ofinal, len(omain), ocumulated, om.ResultText(olast.ToolResults("TaskUpdate")[0]))
	assert.Less(t, final.Total(), ofinal.Total(), "below Claude Code's own tools in the final request")
	assert.Less(t, cumulated, ocumulated, "below Claude Code's own tools over the session")
}

// standardSession runs the standard session (load, then calls) in a
// Claude Code of its own and returns the meter for the tools ours names
// and the session's main requests.
func standardSession(t *testing.T, opts claudecode.Options, load modelapi.Reply, calls []modelapi.Reply, ours func(string) bool) (harness.Meter, []*modelapi.Request) {
	t.Helper()
	script := modelapi.NewScript(append(append([]modelapi.Reply{load}, calls...), modelapi.Text("Done."))...)
	opts.Respond = script.Respond
	h := claudecode.New(t, opts)
	out := h.Command(t, harness.LeanTimeout, "-p", "Plan and do the rework.", "--output-format", "json",
		"--debug-file", h.Debug, "--session-id", uuid.NewString())
	require.NoError(t, out.Err, "claude -p:\n%s\n%s", out.Stdout, out.Stderr)
	require.True(t, script.Done(), "the script was not played to its end:\n%s", h.API.Dump())
	m := harness.Meter{
		Ours:   ours,
		Result: func(b modelapi.Block) string { return claudecode.StripReminders(b.Text) },
	}
	return m, h.API.Main()
}
