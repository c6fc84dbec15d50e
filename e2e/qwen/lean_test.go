package qwen_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/qwen"
)

// TestLeanSession ensures the standard session of issue 40 (20 creates, a
// list, 40 status updates, a list) costs the model at most 13,000 bytes in
// its final request under Qwen Code and less than Claude Code's own Task
// tools summed over the session, that a status update reads at most 100
// bytes, and that TaskList shows the tasks in taskid order. Qwen Code
// defers MCP tools: the model loads them with one tool_search first, whose
// result holds the four definitions; each is counted as a definition is
// counted in every host (name, description, schema), Qwen Code's framing
// around them (<function> tags, its key names) not, as no host's is.
func TestLeanSession(t *testing.T) {
	t.Parallel()
	name := func(tool string) string { return "mcp__" + qwen.Server + "__" + tool }
	script := modelapi.NewScript(append(append([]modelapi.Reply{load}, harness.StandardCalls(name)...), modelapi.Text("Done."))...)
	h := qwen.New(t, qwen.Options{Respond: script.Respond})
	out := h.Command(t, harness.LeanTimeout, "--auth-type", "openai", "--approval-mode", "yolo", "-o", "stream-json", "-p", "Plan and do the rework.")
	require.NoError(t, out.Err, "qwen -p:\n%s\n%s", out.Stdout, out.Stderr)
	require.True(t, script.Done(), "the script was not played to its end:\n%s", h.API.Dump())

	main := h.API.Main()
	last := main[len(main)-1]
	m := harness.Meter{Ours: func(n string) bool { return strings.HasPrefix(n, name("")) }}
	cost := func(r *modelapi.Request) harness.Cost {
		c := m.CostOf(r)
		for _, b := range r.ToolResults("tool_search") {
			c.Definitions += searched(t, b.Text, m.Ours)
		}
		return c
	}
	final, cumulated := cost(last), 0
	for _, r := range main {
		cumulated += cost(r).Total()
	}
	t.Logf("Qwen Code %s, standard session: final request %s; cumulated over %d requests %d bytes",
		qwen.Version, final, len(main), cumulated)
	assert.LessOrEqual(t, final.Total(), harness.LeanFinalBudget, "the final request's cost")
	assert.Less(t, cumulated, harness.LeanCumulatedBudget, "the session's cumulated cost")

	updates := last.ToolResults(qwen.TaskUpdate)
	require.Len(t, updates, 40)
	first := m.ResultText(updates[0])
	t.Logf("a status update at 20 open tasks reads (%d bytes): %s", len(first), first)
	assert.LessOrEqual(t, len(first), harness.LeanUpdateBudget, "a status update's result: %s", first)
	assert.Contains(t, first, "#1")

	lists := last.ToolResults(qwen.TaskList)
	require.Len(t, lists, 2)
	assert.NoError(t, harness.TaskidOrder(m.ResultText(lists[1]), 20))
}

// searched is the size of the definitions of ours a tool_search result
// holds: <function>{"name", "description", "parametersJsonSchema"}</function>
// each, counted as a definition is (name, description, schema).
func searched(t *testing.T, text string, ours func(string) bool) int {
	t.Helper()
	n := 0
	for _, part := range strings.Split(text, "<function>")[1:] {
		body, _, ok := strings.Cut(part, "</function>")
		require.True(t, ok, "a <function> without its end in %q", text)
		var d struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"parametersJsonSchema"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &d), body)
		if ours(d.Name) {
			n += len(d.Name) + len(d.Description) + len(d.Schema)
		}
	}
	return n
}
