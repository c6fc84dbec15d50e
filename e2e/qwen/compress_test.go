package qwen_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/qwen"
)

// TestCompress ensures "/compress" keeps the list: after Qwen Code's
// PreCompact and PostCompact, its SessionStart hook with source "compact"
// compacts the daemon session (the successor holds every task and the
// fired TaskList) and hands the model the list, which the next request
// holds; the next TaskCreate continues the ids.
func TestCompress(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := qwen.New(t, qwen.Options{Respond: p.Respond})
	p.Set(modelapi.NewScript(
		load,
		modelapi.Call(qwen.TaskCreate, map[string]any{"subject": "Write the parser", "description": "by hand"}),
		viaBridge(qwen.TaskCreate, map[string]any{"subject": "Test the parser"}),
		modelapi.Call(qwen.TaskUpdate, map[string]any{"taskid": 1, "status": "completed"}),
		modelapi.Text("Planned."),
	))
	a := h.Run(t, "Plan the parser work.").SessionID

	p.Set(modelapi.NewScript(modelapi.Text("Compressed.")))
	h.Run(t, "/compress", "--resume", a)
	require.NotEmpty(t, h.API.Of(modelapi.KindCompact), "Qwen Code asked the model for a summary:\n%s", h.API.Dump())
	var compact []string
	for _, r := range h.Hooks("SessionStart") {
		if r.Source == "compact" {
			compact = append(compact, r.Context)
		}
	}
	require.Len(t, compact, 1, "SessionStart ran with source compact:\n%s", h.Rec.Dump())
	carried := compact[0]
	assert.Contains(t, carried, "Task list carried over from before the context was compacted")
	assert.Contains(t, carried, qwen.TaskList+" was called for you after the compaction")
	assert.Contains(t, carried, "#1 [completed] Write the parser")
	assert.Contains(t, carried, "#2 [pending] Test the parser")
	head, err := h.Daemon.Client(t).Head(context.Background(), a)
	require.NoError(t, err)
	assert.NotEqual(t, a, head.ID, "the daemon session was compacted: its successor is the head")

	n := len(h.API.Main())
	p.Set(modelapi.NewScript(
		load,
		modelapi.Call(qwen.TaskCreate, map[string]any{"subject": "Ship it"}),
		modelapi.Text("Three tasks now."),
	))
	h.Run(t, "Continue.", "--resume", a)
	main := h.API.Main()[n:]
	require.NotEmpty(t, main)
	text := main[0].AllText()
	assert.NotContains(t, text, "#2 pending: Test the parser", "the tool results before the compression are gone from the context")
	assert.Contains(t, text, "#2 [pending] Test the parser", "the list is in the model's context after the compression")
	assert.Equal(t, 1, strings.Count(text, "#2 [pending] Test the parser\n"), "once")
	created := main[len(main)-1].ToolResults(qwen.TaskCreate)
	require.NotEmpty(t, created)
	assert.Contains(t, created[len(created)-1].Text, "#3 pending: Ship it", "the ids continue")
}

// TestAutoCompression ensures a compression Qwen Code makes by itself in
// the middle of a turn (a reply reporting most of the context window used)
// keeps the list: its SessionStart hook with source "compact" hands the
// model the carried list, which a request after the compression in the
// same turn holds; the next TaskCreate continues the ids.
func TestAutoCompression(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := qwen.New(t, qwen.Options{Respond: p.Respond})
	p.Set(modelapi.NewScript(modelapi.Text("Hello.")))
	a := h.Run(t, "Hello.").SessionID
	n := len(h.API.Main())
	p.Set(modelapi.NewScript(
		load,
		modelapi.Call(qwen.TaskCreate, map[string]any{"subject": "Alpha one"}),
		modelapi.Reply{
			ToolUses: []modelapi.ToolUse{{Name: qwen.TaskCreate, Input: map[string]any{"subject": "Alpha two"}}},
			Usage:    &modelapi.Usage{InputTokens: 900_000, OutputTokens: 20},
		},
		modelapi.Call(qwen.TaskList, map[string]any{}),
		modelapi.Call(qwen.TaskCreate, map[string]any{"subject": "Alpha three"}),
		modelapi.Text("Done."),
	))
	h.Run(t, "Plan and start.", "--resume", a)
	compact := h.API.Of(modelapi.KindCompact)
	require.NotEmpty(t, compact, "Qwen Code compressed the history:\n%s", h.API.Dump())
	harnessWait(t, func() bool {
		for _, r := range h.Hooks("SessionStart") {
			if r.Source == "compact" {
				return true
			}
		}
		return false
	})
	var after []*modelapi.Request
	for _, r := range h.API.Main()[n:] {
		if r.Seq > compact[len(compact)-1].Seq {
			after = append(after, r)
		}
	}
	require.NotEmpty(t, after, h.API.Dump())
	last := after[len(after)-1]
	assert.Contains(t, last.AllText(), "Task list carried over", "the carried list is in the context after the compression:\n%s", h.API.Dump())
	assert.Equal(t, 1, strings.Count(last.AllText(), "Task list carried over"), "once")
	created := last.ToolResults(qwen.TaskCreate)
	require.NotEmpty(t, created)
	assert.Contains(t, created[len(created)-1].Text, "#3 pending: Alpha three", "the ids continue")
}
