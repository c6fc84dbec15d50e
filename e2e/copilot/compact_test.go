package copilot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/copilot"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestCompact ensures "/compact" keeps the list: the preCompact hook
// compacts the daemon session (its successor holds every task and the
// fired TaskList), and the list is owed to the conversation, since no hook
// fires after a compaction; the next run's sessionStart (--resume) hands
// it to the model as the first message after the summary, once; the next
// TaskCreate continues the ids.
func TestCompact(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := copilot.New(t, copilot.Options{Respond: p.Respond})
	p.Set(modelapi.NewScript(
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Write the parser", "description": "by hand"}),
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Test the parser"}),
		modelapi.Call(copilot.TaskUpdate, map[string]any{"taskid": 1, "status": "completed"}),
		modelapi.Text("Planned."),
	))
	a := h.Run(t, "Plan the parser work.").SessionID

	h.Compact(t, a)
	require.NotEmpty(t, h.API.Of(modelapi.KindCompact), "Copilot CLI asked the model for a summary")
	pre := h.Hooks("trigger")
	require.Len(t, pre, 1, "preCompact ran")
	c := h.Daemon.Client(t)
	head, err := c.Head(context.Background(), a)
	require.NoError(t, err)
	assert.NotEqual(t, a, head.ID, "the daemon session was compacted: its successor is the head")
	assert.Equal(t, []string{"#1 completed Write the parser", "#2 pending Test the parser"}, tasks(h.Daemon.Resume(t, a).Tasks))

	n := len(h.API.Main())
	resumed := p.Set(modelapi.NewScript(
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Ship it"}),
		modelapi.Text("Three tasks now."),
	))
	h.Run(t, "Continue.", "--resume", a)
	require.True(t, resumed.Done(), h.API.Dump())
	main := h.API.Main()[n:]
	starts := h.Hooks("source")
	require.Len(t, starts, 2)
	carried := hookContext(t, starts[1].Output)
	require.NotEmpty(t, carried, "the list owed since the compaction was delivered at the resume")
	assert.Contains(t, carried, "Task list carried over from before the context was compacted")
	assert.Contains(t, carried, copilot.TaskList+" was called for you after the compaction")
	assert.Contains(t, carried, "#1 [completed] Write the parser")
	assert.Contains(t, carried, "#2 [pending] Test the parser")
	text := main[0].ConversationText()
	assert.Contains(t, text, carried, "the carried list is in the model's context")
	assert.NotContains(t, text, "#2 pending: Test the parser", "the tool results before the compaction are gone from the context")
	created := main[1].ToolResults(copilot.TaskCreate)
	require.Len(t, created, 1)
	assert.Contains(t, created[0].Text, "#3 pending: Ship it", "the ids continue")

	// Delivered once: the next resume gets the list as any resume does
	// (Copilot CLI keeps a sessionStart's context for that run only), not
	// the carried list again.
	p.Set(modelapi.NewScript(modelapi.Text("Nothing to do.")))
	h.Run(t, "Anything?", "--resume", a)
	again := hookContext(t, h.Hooks("source")[2].Output)
	assert.NotContains(t, again, "carried over")
	last := h.API.Main()[len(h.API.Main())-1]
	text = last.ConversationText()
	assert.Equal(t, 0, strings.Count(text, "Task list carried over"), "the carried list was given once:\n%s", text)
	assert.Equal(t, 1, strings.Count(text, "#3 [pending] Ship it\n"), "the list is in the context once:\n%s", text)
}

// TestAutoCompaction ensures a compaction Copilot CLI makes by itself in
// the middle of a -p run (a reply reporting most of a 40,000-token prompt
// limit used) keeps the list within that run: preCompact compacts the
// daemon session, and the postToolUse hook of the next tool call hands the
// model the carried list (Copilot CLI appends it to that call's result),
// once; ids go on across it.
func TestAutoCompaction(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := copilot.New(t, copilot.Options{Respond: p.Respond, MaxPromptTokens: 40_000})
	p.Set(modelapi.NewScript(
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Alpha one"}),
		modelapi.Reply{ToolUses: []modelapi.ToolUse{{Name: copilot.TaskCreate, Input: map[string]any{"subject": "Alpha two"}}},
			Usage: &modelapi.Usage{InputTokens: 38_000, OutputTokens: 20}},
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Alpha three"}),
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Alpha four"}),
		modelapi.Text("Done."),
	))
	a := h.Run(t, "Plan.").SessionID
	compact := h.API.Of(modelapi.KindCompact)
	require.NotEmpty(t, compact, "Copilot CLI compacted by itself:\n%s", h.API.Dump())
	require.Len(t, h.Hooks("trigger"), 1, "preCompact ran")
	assert.Contains(t, h.Hooks("trigger")[0].Input, `"trigger":"auto"`)

	main := h.API.Main()
	last := main[len(main)-1]
	text := last.ConversationText()
	assert.NotContains(t, text, "#1 pending: Alpha one", "the results before the compaction are gone")
	assert.Equal(t, 1, strings.Count(text, "Task list carried over from before the context was compacted"), "the carried list, once:\n%s", text)
	assert.Contains(t, text, "#2 [pending] Alpha two")
	created := last.ToolResults(copilot.TaskCreate)
	require.NotEmpty(t, created)
	assert.Contains(t, created[len(created)-1].Text, "#4 pending: Alpha four", "the ids go on")
	assert.Equal(t, []string{"#1 pending Alpha one", "#2 pending Alpha two", "#3 pending Alpha three", "#4 pending Alpha four"},
		tasks(h.Daemon.Resume(t, a).Tasks))
}
