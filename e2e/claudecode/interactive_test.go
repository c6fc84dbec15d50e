package claudecode_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestCompactInteractive ensures /compact in the interactive CLI keeps the
// list: the SessionStart:compact hook compacts the daemon session and puts
// the list in front of the model beside Claude Code's summary, and the next
// TaskCreate continues the ids in the successor session.
func TestCompactInteractive(t *testing.T) {
	t.Parallel()
	script := modelapi.NewScript(
		loadTools,
		modelapi.Call(taskCreate, map[string]any{"subject": "Write the parser"}),
		modelapi.Text("Planned."),
		modelapi.Call(taskCreate, map[string]any{"subject": "Test the parser"}),
		modelapi.Text("Continued."),
	)
	h := claudecode.New(t, claudecode.Options{Respond: script.Respond})
	id := uuid.NewString()
	term := h.Interactive(t, "--session-id", id)

	term.Submit("Plan the parser work.")
	term.WaitForText(30*time.Second, "Planned.")
	term.Submit("/compact")
	term.WaitForText(30*time.Second, "Compacted")
	require.Len(t, h.API.Of(modelapi.KindCompact), 1, "one summary request (a reply without <summary> is asked again)")

	before := len(h.API.Main())
	term.Submit("Go on.")
	term.WaitForText(30*time.Second, "Continued.")
	require.True(t, script.Done())

	after := h.API.Main()[before:]
	require.Len(t, after, 2, h.API.Dump())
	first := after[0]
	assert.Contains(t, first.ConversationText(), claudecode.CompactSummary, "Claude Code's summary")
	var hookText string
	for _, m := range first.Messages {
		for _, b := range m.Blocks {
			if b.Type == modelapi.BlockText && strings.Contains(b.Text, "Write the parser") {
				hookText += b.Text
			}
		}
	}
	assert.NotEmpty(t, hookText, "the SessionStart:compact hook's list is not in the first request after compaction")
	assert.Empty(t, first.ToolResults(taskCreate), "the history before compaction is gone")

	created := toolJSON(t, after[1].PendingToolResults()[0])
	assert.Contains(t, created["message"], "#2")

	s := h.Daemon.Resume(t, id)
	assert.NotEqual(t, id, s.Session.ID, "the daemon session was not compacted")
	assert.Equal(t, id, s.Session.ParentID)
	require.Len(t, s.Tasks, 2)
	assert.Equal(t, "Write the parser", s.Tasks[0].Subject)
	assert.Equal(t, "Test the parser", s.Tasks[1].Subject)
}
