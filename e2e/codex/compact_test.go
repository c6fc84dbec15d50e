package codex_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/codex"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// compactLimit is the auto-compaction threshold the compaction tests set
// (model_auto_compact_token_limit): a reply reporting more input tokens
// than this makes Codex compact before its next request.
const compactLimit = 50_000

// TestAutoCompact ensures that when Codex compacts on its own in the
// middle of a turn ("codex exec" has no /compact; a reply's usage over
// model_auto_compact_token_limit triggers it between two tool calls), the
// compact hook runs and compacts the daemon session, its list reaches the
// model right after Codex's summary (a developer message), the tools must
// be loaded again (Codex drops the tool_search output with the history)
// and the ids go on; and that a resume afterwards still shows the list
// once (the hook's message survives in the rollout after the compaction),
// with the ids going on.
func TestAutoCompact(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := codex.New(t, codex.Options{Respond: p.Respond, Config: "model_auto_compact_token_limit = 50000"})
	full := modelapi.Call(taskCreate, map[string]any{"subject": "Two"})
	full.Usage = &modelapi.Usage{InputTokens: compactLimit + 10_000, OutputTokens: 50}
	script := p.Set(modelapi.NewScript(
		loadTools,
		modelapi.Call(taskCreate, map[string]any{"subject": "One"}),
		full,
		loadTools, // after the compaction
		modelapi.Call(taskCreate, map[string]any{"subject": "Three"}),
		modelapi.Text("All three."),
	))
	res := h.Exec(t, "Plan three.")
	a := res.ThreadID
	require.True(t, script.Done(), h.API.Dump())
	assert.Equal(t, "All three.", res.Message)

	compacts := h.API.Of(modelapi.KindCompact)
	require.Len(t, compacts, 1, "Codex did not auto-compact")
	assert.Contains(t, compacts[0].LastUserText(), codex.CompactPrompt)
	hook := hookOf(t, h, "compact")
	assert.Equal(t, a, hook.SessionID, "the thread id stays the same across compaction")
	require.NotEmpty(t, hook.Context)
	assert.Contains(t, hook.Context, "#2 [pending] Two")

	var next *modelapi.Request
	for _, r := range h.API.Main() {
		if r.Seq > compacts[0].Seq {
			next = r
			break
		}
	}
	require.NotNil(t, next, "no request after the compaction")
	// The compacted history: the user's messages, Codex's summary, then
	// the hook's list.
	text := next.ConversationText()
	assert.Contains(t, text, codex.SummaryPrefix)
	assert.Contains(t, text, codex.CompactSummary)
	ctx := hookContexts(next)
	require.Len(t, ctx, 1, "the compaction hook's list is not in the request after it")
	assert.Equal(t, hook.Context, ctx[0])
	assert.Greater(t, strings.Index(text, ctx[0]), strings.Index(text, codex.CompactSummary), "the list comes after the summary")
	assert.False(t, next.HasTool(taskCreate), "the tools were still loaded after the compaction (Codex dropped them before)")
	assert.Empty(t, next.ToolResults(""), "tool calls survived the compaction")

	last := h.API.LastMain(t)
	assert.Contains(t, toolJSON(t, pending(t, last))["message"], "#3")
	assert.Equal(t, []string{"1 pending One", "2 pending Two", "3 pending Three"}, h.Daemon.Subjects(t, a))
	// The daemon session was compacted: the thread's session has a successor.
	head := h.Daemon.Resume(t, a)
	assert.NotEqual(t, a, head.Session.ID, "the compact hook did not compact the daemon session")

	// Resume: the hook's message from after the compaction is still in
	// the history, so the list is there once, and the hook adds nothing
	// (the list changed, though: #3 is new, so it adds the new one).
	n := len(h.API.Main())
	p.Set(modelapi.NewScript(
		loadTools,
		modelapi.Call(taskList, nil),
		modelapi.Call(taskCreate, map[string]any{"subject": "Four"}),
		modelapi.Text("Four."),
	))
	h.Resume(t, a, "Go on.")
	main := since(h, n)
	require.Len(t, main, 4, h.API.Dump())
	resume := lastHook(t, h)
	assert.Equal(t, "resume", resume.Source)
	ctx = hookContexts(main[0])
	require.NotEmpty(t, ctx)
	assert.Equal(t, hook.Context, ctx[0], "the compact hook's list is gone from the resumed history")
	assert.Contains(t, ctx[len(ctx)-1], "#3 [pending] Three", "the resumed turn does not show the current list")
	assert.Equal(t, []string{"1 pending One", "2 pending Two", "3 pending Three"}, tasksOf(t, toolJSON(t, pending(t, main[2]))))
	assert.Contains(t, toolJSON(t, pending(t, main[3]))["message"], "#4")
}
