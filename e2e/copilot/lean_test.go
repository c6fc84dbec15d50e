package copilot_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/copilot"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestLeanSession ensures the standard session of issue 40 (20 creates, a
// list, 40 status updates, a list) costs the model at most 13,000 bytes in
// its final request under Copilot CLI and less than Claude Code's own Task
// tools summed over the session, that a status update reads at most 100
// bytes, and that TaskList shows the tasks in taskid order.
func TestLeanSession(t *testing.T) {
	t.Parallel()
	name := func(tool string) string { return copilot.Server + "-" + tool }
	script := modelapi.NewScript(append(harness.StandardCalls(name), modelapi.Text("Done."))...)
	h := copilot.New(t, copilot.Options{Respond: script.Respond})
	out := h.Command(t, harness.LeanTimeout, h.Args("Plan and do the rework.")...)
	require.NoError(t, out.Err, "copilot -p:\n%s\n%s", out.Stdout, out.Stderr)
	require.True(t, script.Done(), "the script was not played to its end:\n%s", h.API.Dump())

	main := h.API.Main()
	m := harness.Meter{Ours: func(n string) bool { return strings.HasPrefix(n, name("")) }}
	last := main[len(main)-1]
	final, cumulated := m.CostOf(last), m.Cumulated(main)
	t.Logf("GitHub Copilot CLI %s, standard session: final request %s; cumulated over %d requests %d bytes",
		copilot.Version, final, len(main), cumulated)
	assert.LessOrEqual(t, final.Total(), harness.LeanFinalBudget, "the final request's cost")
	assert.Less(t, cumulated, harness.LeanCumulatedBudget, "the session's cumulated cost")

	updates := last.ToolResults(copilot.TaskUpdate)
	require.Len(t, updates, 40)
	first := m.ResultText(updates[0])
	t.Logf("a status update at 20 open tasks reads (%d bytes): %s", len(first), first)
	assert.LessOrEqual(t, len(first), harness.LeanUpdateBudget, "a status update's result: %s", first)
	assert.Contains(t, first, "#1")

	lists := last.ToolResults(copilot.TaskList)
	require.Len(t, lists, 2)
	assert.NoError(t, harness.TaskidOrder(m.ResultText(lists[1]), 20))
}
