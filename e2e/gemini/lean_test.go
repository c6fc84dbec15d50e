package gemini_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/gemini"
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
	name := func(tool string) string { return "mcp_" + gemini.Server + "_" + tool }
	calls := harness.StandardCalls(name)
	for _, c := range calls {
		for _, u := range c.ToolUses {
			u.Input.(map[string]any)["wait_for_previous"] = true
		}
	}
	script := modelapi.NewScript(append(calls, modelapi.Text("Done."))...)
	h := gemini.New(t, gemini.Options{Respond: script.Respond})
	out := h.Command(t, harness.LeanTimeout, "-o", "stream-json", "-p", "Plan and do the rework.")
	require.NoError(t, out.Err, "gemini -p:\n%s\n%s", out.Stdout, out.Stderr)
	require.True(t, script.Done(), "the script was not played to its end:\n%s", h.API.Dump())

	main := h.API.Main()
	m := harness.Meter{
		Ours:       func(n string) bool { return strings.HasPrefix(n, name("")) },
		Result:     func(b modelapi.Block) string { return untrusted(b.Text) },
		HostParams: []string{"wait_for_previous"},
	}
	last := main[len(main)-1]
	for _, tool := range last.Tools {
		if m.Ours(tool.Name) {
			t.Logf("DEF %s %q %s", tool.Name, tool.Description, tool.InputSchema)
		}
	}
	final, cumulated := m.CostOf(last), m.Cumulated(main)
	t.Logf("Gemini CLI %s, standard session: final request %s; cumulated over %d requests %d bytes",
		gemini.Version, final, len(main), cumulated)
	assert.LessOrEqual(t, final.Total(), harness.LeanFinalBudget, "the final request's cost")
	assert.Less(t, cumulated, harness.LeanCumulatedBudget, "the session's cumulated cost")

	updates := last.ToolResults(gemini.TaskUpdate)
	require.Len(t, updates, 40)
	first := m.ResultText(updates[0])
	t.Logf("a status update at 20 open tasks reads (%d bytes): %s", len(first), first)
	assert.LessOrEqual(t, len(first), harness.LeanUpdateBudget, "a status update's result: %s", first)
	assert.Contains(t, first, "#1")

	lists := last.ToolResults(gemini.TaskList)
	require.Len(t, lists, 2)
	assert.NoError(t, harness.TaskidOrder(m.ResultText(lists[1]), 20))
}

// untrusted returns the text Gemini CLI wraps in <untrusted_context>: the
// MCP result's own.
func untrusted(s string) string {
	const open, end = "<untrusted_context>", "</untrusted_context>"
	if i := strings.Index(s, open); i >= 0 {
		s = s[i+len(open):]
		if j := strings.LastIndex(s, end); j >= 0 {
			s = s[:j]
		}
	}
	return strings.TrimSpace(s)
}
