package copilot

import (
	"strings"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// CompactPrompt is in the last user message of Copilot CLI's compaction
// request (which offers the tools, as a turn does).
const CompactPrompt = "The history is being compacted"

// Classify tells Copilot CLI's side requests from the conversation's
// turns: a compaction asks for a summary (CompactPrompt); a turn offers
// tools; the rest are side requests.
func Classify(r *modelapi.Request) string {
	switch {
	case strings.Contains(r.LastUserText(), CompactPrompt):
		return modelapi.KindCompact
	case len(r.Tools) > 0:
		return modelapi.KindMain
	}
	return modelapi.KindSide
}

// CompactSummary is the summary DefaultReply gives a compaction.
const CompactSummary = "E2E compaction summary: the user asked for a task list; the model made it."

// DefaultReply answers side requests: the summary for a compaction, "OK"
// otherwise.
func DefaultReply(r *modelapi.Request) modelapi.Reply {
	if r.Kind == modelapi.KindCompact {
		return modelapi.Text(CompactSummary)
	}
	return modelapi.Text("OK")
}
