package gemini

import (
	"strings"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// Classify tells Gemini CLI's side requests from the conversation's turns:
// agent turns stream (:streamGenerateContent) and offer tools; a
// compression summary is a :generateContent request whose system prompt
// asks for a <state_snapshot>; other non-streaming requests (checks,
// routing, titles) are side requests.
func Classify(r *modelapi.Request) string {
	switch {
	case r.Stream && len(r.Tools) > 0:
		return modelapi.KindMain
	case strings.Contains(r.System, "state_snapshot"):
		return modelapi.KindCompact
	case r.Stream:
		return modelapi.KindMain
	}
	return modelapi.KindSide
}

// DefaultReply answers side requests: a summary for a compression, an
// empty JSON object otherwise (checks that expect JSON take it as no).
func DefaultReply(r *modelapi.Request) modelapi.Reply {
	if r.Kind == modelapi.KindCompact {
		return modelapi.Text("<state_snapshot>\n<overall_goal>e2e summary</overall_goal>\n</state_snapshot>")
	}
	return modelapi.Text("{}")
}
