package opencode

import (
	"strings"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// What OpenCode 1.18.33 sends in its side requests.
const (
	// titlePrompt opens the system prompt of the title request (the
	// hidden "title" agent, on the small model), sent at a session's
	// first turn.
	titlePrompt = "You are a title generator"
	// compactPrompt opens the system prompt of the compaction request
	// (the hidden "compaction" agent): no tools, one user message holding
	// the conversation as text, the summary template, and what plugins
	// added (experimental.session.compacting's output.context).
	compactPrompt = "You are a context summarization agent"
	// CompactAsk is in that user message, after the conversation.
	CompactAsk = "Create a new anchored summary from the conversation history"
	// CompactionQuestion is what the model reads of OpenCode's compaction
	// message (a user message holding a "compaction" part), which the
	// summary answers.
	CompactionQuestion = "What did we do so far?"
	// ContinuePrompt is the synthetic user message OpenCode adds after an
	// automatic compaction, so that the model goes on.
	ContinuePrompt = "Continue if you have next steps"
)

// Classify tells OpenCode's side requests from the conversation's turns:
// the title request, the compaction request, and anything else without
// tools (a side request); a subagent's turns are main turns too (they run
// inside the parent's task tool call, so a script plays them in order).
func Classify(r *modelapi.Request) string {
	switch {
	case strings.HasPrefix(r.System, titlePrompt):
		return modelapi.KindTitle
	case strings.HasPrefix(r.System, compactPrompt) || strings.Contains(r.LastUserText(), CompactAsk):
		return modelapi.KindCompact
	case len(r.Tools) == 0:
		return modelapi.KindSide
	}
	return modelapi.KindMain
}

// CompactSummary is the summary DefaultReply gives a compaction request.
const CompactSummary = "## Objective\n- E2E compaction summary: the user asked for a task list; the model made it."

// DefaultReply answers a side request nobody scripted: a summary for
// compaction, a title, "OK" otherwise.
func DefaultReply(r *modelapi.Request) modelapi.Reply {
	switch r.Kind {
	case modelapi.KindCompact:
		return modelapi.Text(CompactSummary)
	case modelapi.KindTitle:
		return modelapi.Text("E2E session")
	}
	return modelapi.Text("OK")
}
