package gemini_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/gemini"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// listMarker is the last line of the list the hooks add: it names the
// session, so a request holds the list as many times as it holds this.
func listMarker(session string) string { return "(tasksessiond session " + session + ", list " }

// A reply reporting 600,000 prompt tokens (over half of gemini-2.5-pro's
// 1,048,576) makes Gemini CLI compress the history before the next request,
// in the middle of the turn: the summarizer's <state_snapshot> replaces the
// old history, and the BeforeModel hook appends the list to it, so every
// request after it holds the list once; ids go on.
func TestAutoCompression(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := gemini.New(t, gemini.Options{Respond: p.Respond})
	// A first turn: Gemini CLI compresses only up to a user message that
	// starts a turn, so a compression within the session's first turn has
	// nothing to compress.
	p.Set(modelapi.NewScript(modelapi.Text("Hello.")))
	id := h.Run(t, "Hello.").SessionID
	n := len(h.API.Main())
	p.Set(modelapi.NewScript(
		modelapi.Calls(
			call(gemini.TaskCreate, map[string]any{"subject": "Alpha one"}),
			call(gemini.TaskCreate, map[string]any{"subject": "Alpha two"}),
		),
		modelapi.Reply{
			ToolUses: []modelapi.ToolUse{call(gemini.TaskUpdate, map[string]any{"taskid": 1, "status": "in_progress"})},
			Usage:    &modelapi.Usage{InputTokens: 600_000, OutputTokens: 20},
		},
		modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Alpha three"})),
		modelapi.Text("Done."),
	))
	h.Run(t, "Plan and start.", "--resume", id)

	compact := h.API.Of(modelapi.KindCompact)
	require.NotEmpty(t, compact, "Gemini CLI compressed the history:\n%s", h.API.Dump())
	main := h.API.Main()[n:]
	require.Len(t, main, 4, h.API.Dump())
	for i, r := range main[:2] {
		assert.NotContains(t, r.ConversationText(), "<state_snapshot>", "request %d is before the compression", i+1)
		assert.NotContains(t, r.ConversationText(), listMarker(id), "request %d: no list is added before a compression", i+1)
	}
	after := main[2]
	require.Greater(t, after.Seq, compact[len(compact)-1].Seq, "the compression came between the second and third request of the turn")
	text := after.ConversationText()
	assert.Contains(t, text, "<state_snapshot>")
	assert.NotContains(t, text, "Hello.", "the old history is gone")
	assert.Equal(t, 1, strings.Count(text, listMarker(id)), "the list once, after the compression:\n%s", text)
	assert.Contains(t, text, "#1 [inprogress] Alpha one")
	assert.Contains(t, text, "#2 [pending] Alpha two")
	assert.Contains(t, text, "next mcp_tasks_TaskCreate gets #3")
	for _, m := range after.Messages {
		if strings.Contains(m.Text(), listMarker(id)) {
			assert.Contains(t, m.Text(), "<state_snapshot>", "the list is in the summary's message")
		}
	}
	assert.Contains(t, result(t, main[3], gemini.TaskCreate), "#3 pending:")
	assert.Equal(t, 1, strings.Count(main[3].ConversationText(), listMarker(id)), "and in every request after it, once")

	assert.Equal(t, []string{"#1 inprogress Alpha one", "#2 pending Alpha two", "#3 pending Alpha three"}, tasks(h.Daemon.Resume(t, id).Tasks))

	// Resumed after the compression: the resume hook's list and the
	// summary are both in the history, the list still once.
	n = len(h.API.Main())
	p.Set(modelapi.NewScript(modelapi.Text("ok")))
	h.Run(t, "Go on.", "--resume", id)
	m := h.API.Main()[n:]
	require.Len(t, m, 1)
	text = m[0].ConversationText()
	assert.Contains(t, text, "<state_snapshot>")
	assert.Contains(t, m[0].LastUserText(), "#3 [pending] Alpha three")
	assert.Equal(t, 1, strings.Count(text, listMarker(id)), "the list once after a resume of a compressed session:\n%s", text)
}

// /compress (interactive, tmux) compresses the whole history: the summary
// and its acknowledgement replace it, and the next request holds the list
// once, in the summary's message; ids go on.
func TestCompressCommand(t *testing.T) {
	t.Parallel()
	h := gemini.New(t, gemini.Options{Respond: modelapi.Steps(
		&modelapi.Step{Match: modelapi.LastUserContains("Plan A."), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Alpha one"}), call(gemini.TaskCreate, map[string]any{"subject": "Alpha two"}))
		}},
		&modelapi.Step{Match: modelapi.LastUserContains("Next."), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Alpha three"}))
		}},
		&modelapi.Step{Match: modelapi.IsKind(modelapi.KindMain), Reply: func(*modelapi.Request) modelapi.Reply { return modelapi.Text("Noted.") }},
	)})
	term := h.Interactive(t)
	submit(t, term, "Plan A.", func() bool { return len(h.API.Main()) > 0 })
	term.WaitForText(60*time.Second, "Noted.")
	id := h.Hooks("SessionStart")[0].SessionID

	submit(t, term, "/compress", func() bool { return len(h.API.Of(modelapi.KindCompact)) > 0 })
	term.WaitForText(60*time.Second, "compressed from")
	for i, r := range h.API.Main() {
		assert.NotContains(t, r.ConversationText(), listMarker(id), "request %d: no list before the compression", i+1)
	}

	n := len(h.API.Main())
	submit(t, term, "Next.", func() bool { return len(h.API.Main()) > n })
	h.API.Wait(t, 60*time.Second, "TaskCreate #3's result", func(rs []*modelapi.Request) bool {
		for _, r := range rs[n:] {
			if len(pending(r)[gemini.TaskCreate]) > 0 {
				return true
			}
		}
		return false
	})
	m := h.API.Main()[n:]
	require.GreaterOrEqual(t, len(m), 2)
	text := m[0].ConversationText()
	assert.Contains(t, text, "<state_snapshot>")
	assert.NotContains(t, text, "Plan A.", "the old history is gone")
	assert.Equal(t, 1, strings.Count(text, listMarker(id)), "the list once after /compress:\n%s", text)
	assert.Contains(t, text, "#2 [pending] Alpha two")
	assert.Contains(t, result(t, m[1], gemini.TaskCreate), "#3 pending:")
	assert.Equal(t, 1, strings.Count(m[1].ConversationText(), listMarker(id)))
}
