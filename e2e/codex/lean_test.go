package codex_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/codex"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestLeanSession ensures the standard session of issue 40 (20 creates, a
// list, 40 status updates, a list) costs the model at most 13,000 bytes in
// its final request and less than Claude Code's own Task tools summed over
// the session, that a status update reads at most 100 bytes, and that
// TaskList shows the tasks in taskid order.
func TestLeanSession(t *testing.T) {
	t.Parallel()
	name := func(tool string) string { return "mcp__tasks__" + tool }
	script := modelapi.NewScript(append(append([]modelapi.Reply{loadTools}, harness.StandardCalls(name)...), modelapi.Text("Done."))...)
	h := codex.New(t, codex.Options{Respond: script.Respond})
	out := h.Command(t, harness.LeanTimeout, "exec", "--json", "--skip-git-repo-check", "-C", h.Project, "--color", "never",
		"--", "Plan and do the rework.")
	require.NoError(t, out.Err, "codex exec:\n%s\n%s", out.Stdout, out.Stderr)
	require.True(t, script.Done(), "the script was not played to its end:\n%s", h.API.Dump())

	main := h.API.Main()
	m := harness.Meter{
		Ours:   func(n string) bool { return strings.HasPrefix(n, "mcp__tasks__") },
		Result: codex.ToolOutput,
	}
	last := main[len(main)-1]
	final, cumulated := m.CostOf(last), m.Cumulated(main)
	t.Logf("Codex CLI %s, standard session: final request %s; cumulated over %d requests %d bytes",
		codex.Version, final, len(main), cumulated)
	assert.LessOrEqual(t, final.Total(), harness.LeanFinalBudget, "the final request's cost")
	assert.Less(t, cumulated, harness.LeanCumulatedBudget, "the session's cumulated cost")

	updates := last.ToolResults(taskUpdate)
	require.Len(t, updates, 40)
	first := m.ResultText(updates[0])
	t.Logf("a status update at 20 open tasks reads (%d bytes): %s", len(first), first)
	assert.LessOrEqual(t, len(first), harness.LeanUpdateBudget, "a status update's result: %s", first)
	assert.Contains(t, first, "#1")

	lists := last.ToolResults(taskList)
	require.Len(t, lists, 2)
	for _, l := range lists {
		t.Logf("TaskList reads (%d bytes): %s", len(m.ResultText(l)), m.ResultText(l))
	}
	assert.NoError(t, harness.TaskidOrder(m.ResultText(lists[1]), 20))
}
