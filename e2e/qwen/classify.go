package qwen

import (
	"strings"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// Classify tells Qwen Code's side requests from the conversation's turns:
// a turn of the conversation offers tools; a compression summary asks
// for a <state_snapshot> (Qwen Code keeps Gemini CLI's); other requests
// without tools (titles, checks) are side requests.
func Classify(r *modelapi.Request) string {
	switch {
	case strings.Contains(r.System, "state_snapshot") || strings.Contains(r.LastUserText(), "state_snapshot"):
		return modelapi.KindCompact
	case strings.Contains(r.LastUserText(), "Managed memory has"): // its memory agent
		return modelapi.KindSide
	case len(r.Tools) > 0:
		return modelapi.KindMain
	}
	return modelapi.KindSide
}

// DefaultReply answers side requests: a summary for a compression, an
// empty JSON object otherwise.
func DefaultReply(r *modelapi.Request) modelapi.Reply {
	if r.Kind == modelapi.KindCompact {
		return modelapi.Text("<state_snapshot>\n<overall_goal>e2e summary</overall_goal>\n</state_snapshot>")
	}
	return modelapi.Text("{}")
}
