package codex

import (
	"encoding/json"
	"strings"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// CompactPrompt opens the instructions Codex appends as the last user
// message when it compacts locally (a provider that is not OpenAI's:
// core/templates/compact/prompt.md): the conversation so far, then this.
const CompactPrompt = "You are performing a CONTEXT CHECKPOINT COMPACTION"

// SummaryPrefix opens the user message in which Codex hands the summary
// to the model after a compaction (core/templates/compact/summary_prefix.md).
const SummaryPrefix = "Another language model started to solve this problem and produced a summary"

// Classify tells Codex's side requests from the conversation's turns:
//   - compaction: the conversation plus CompactPrompt;
//   - anything without tools, or asking for structured output (a title,
//     a memory summary, ...): a side request.
func Classify(r *modelapi.Request) string {
	if strings.Contains(r.LastUserText(), CompactPrompt) {
		return modelapi.KindCompact
	}
	var body struct {
		Text struct {
			Format struct {
				Type string `json:"type"`
				Name string `json:"name"`
			} `json:"format"`
		} `json:"text"`
	}
	if json.Unmarshal(r.Raw, &body) == nil && body.Text.Format.Type == "json_schema" {
		return modelapi.KindSide
	}
	if len(r.Tools) == 0 {
		return modelapi.KindSide
	}
	return modelapi.KindMain
}

// CompactSummary is the summary DefaultReply gives a compaction request.
const CompactSummary = "E2E compaction summary: the user asked for a task list; the model made it."

// DefaultReply answers a side request nobody scripted: the summary for a
// compaction, "OK" otherwise.
func DefaultReply(r *modelapi.Request) modelapi.Reply {
	if r.Kind == modelapi.KindCompact {
		return modelapi.Text(CompactSummary)
	}
	return modelapi.Text("OK")
}

// ToolOutput returns what an MCP tool's result showed the model, without
// the "Wall time: ... seconds\nOutput:\n" Codex puts before it.
func ToolOutput(b modelapi.Block) string {
	text := b.Text
	if i := strings.Index(text, "\nOutput:\n"); i >= 0 && strings.HasPrefix(text, "Wall time:") {
		text = text[i+len("\nOutput:\n"):]
	}
	return text
}

// ToolJSON decodes an MCP tool's result as the model read it: Codex 0.169
// passes on the result's structuredContent, as JSON text, after the wall
// time.
func ToolJSON(b modelapi.Block) (map[string]any, error) {
	var v map[string]any
	err := json.Unmarshal([]byte(ToolOutput(b)), &v)
	return v, err
}
