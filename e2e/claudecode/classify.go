package claudecode

import (
	"encoding/json"
	"strings"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// compactPrompt opens the instructions Claude Code appends as the last user
// message when it asks the model to summarise the conversation (/compact,
// auto-compaction). A reply without a <summary> block is asked for again.
const compactPrompt = "Your task is to create a detailed summary of the conversation"

// Classify tells Claude Code's side requests from the conversation's turns:
//   - compaction: the conversation plus compactPrompt, with the usual tools;
//   - the session title: a structured-output request (output_config's JSON
//     schema with a "title" property), no tools;
//   - anything else without tools, or to the small fast model: a side
//     request (suggestions, summaries, ...).
func Classify(r *modelapi.Request) string {
	if strings.Contains(r.LastUserText(), compactPrompt) {
		return modelapi.KindCompact
	}
	var body struct {
		OutputConfig struct {
			Format struct {
				Schema struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"schema"`
			} `json:"format"`
		} `json:"output_config"`
	}
	if json.Unmarshal(r.Raw, &body) == nil {
		if _, ok := body.OutputConfig.Format.Schema.Properties["title"]; ok {
			return modelapi.KindTitle
		}
	}
	if len(r.Tools) == 0 || r.Model == SmallModel {
		return modelapi.KindSide
	}
	return modelapi.KindMain
}

// CompactSummary is the summary DefaultReply gives a compaction request.
const CompactSummary = "E2E compaction summary: the user asked for a task list; the model made it."

// DefaultReply answers a side request nobody scripted: a summary in the
// shape Claude Code requires for compaction, a title as the JSON its
// schema asks for, "OK" otherwise.
func DefaultReply(r *modelapi.Request) modelapi.Reply {
	switch r.Kind {
	case modelapi.KindCompact:
		return modelapi.Text("<analysis>scripted</analysis>\n<summary>" + CompactSummary + "</summary>")
	case modelapi.KindTitle:
		return modelapi.Text(`{"title":"E2E session"}`)
	}
	return modelapi.Text("OK")
}

// StripReminders returns text without the <system-reminder> blocks Claude
// Code appends to tool results and user messages.
func StripReminders(text string) string {
	for {
		i := strings.Index(text, "<system-reminder>")
		if i < 0 {
			return strings.TrimSpace(text)
		}
		j := strings.Index(text[i:], "</system-reminder>")
		if j < 0 {
			return strings.TrimSpace(text[:i])
		}
		text = text[:i] + text[i+j+len("</system-reminder>"):]
	}
}

// ToolJSON decodes a tool result that Claude Code passed on as the MCP
// result's structuredContent (JSON text, reminders stripped).
func ToolJSON(b modelapi.Block) (map[string]any, error) {
	var v map[string]any
	err := json.Unmarshal([]byte(StripReminders(b.Text)), &v)
	return v, err
}
