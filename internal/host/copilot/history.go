package copilot

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/host/transcript"
)

// History reads Copilot CLI's record of a session, events.jsonl: one JSON
// event a line; an MCP call is a tool.execution_start (its server, tool and
// arguments) and a tool.execution_complete (whether it succeeded), paired
// by toolCallId.
type History struct{}

// event is the part of an events.jsonl line read here.
type event struct {
	Type string `json:"type"`
	Data struct {
		ToolCallID    string          `json:"toolCallId"`
		MCPServerName string          `json:"mcpServerName"`
		MCPToolName   string          `json:"mcpToolName"`
		Arguments     json.RawMessage `json:"arguments"`
		Success       *bool           `json:"success"`
	} `json:"data"`
}

// Calls returns the Task calls of the session whose events.jsonl is at
// path (those of the MCP server named server, "" for any), in the order
// made, each with whether it failed. A call with no outcome (the run was
// cut off) is left out: the model never learned what it did.
func Calls(ctx context.Context, path, server string) ([]client.TranscriptCall, error) {
	type call struct {
		client.TranscriptCall
		id   string
		done bool
	}
	var calls []*call
	at := map[string]*call{}
	err := transcript.Lines(ctx, path, func(line []byte) {
		if !strings.Contains(string(line[:min(len(line), 64)]), `"tool.execution_`) {
			return
		}
		var e event
		if json.Unmarshal(line, &e) != nil || e.Data.ToolCallID == "" {
			return
		}
		switch e.Type {
		case "tool.execution_start":
			if e.Data.MCPServerName == "" || (server != "" && e.Data.MCPServerName != server) || !isTask(e.Data.MCPToolName) {
				return
			}
			if _, dup := at[e.Data.ToolCallID]; dup {
				return
			}
			args := e.Data.Arguments
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			c := &call{TranscriptCall: client.TranscriptCall{Name: e.Data.MCPToolName, Arguments: args, CallID: "copilot-" + e.Data.ToolCallID}, id: e.Data.ToolCallID}
			at[c.id] = c
			calls = append(calls, c)
		case "tool.execution_complete":
			if c, ok := at[e.Data.ToolCallID]; ok && e.Data.Success != nil {
				c.done, c.IsError = true, !*e.Data.Success
			}
		}
	})
	if err != nil {
		return nil, err
	}
	var out []client.TranscriptCall
	for _, c := range calls {
		if c.done {
			out = append(out, c.TranscriptCall)
		}
	}
	return out, nil
}

func isTask(tool string) bool {
	switch tool {
	case "TaskCreate", "TaskUpdate", "TaskList", "TaskGet":
		return true
	}
	return false
}

// compactionDone is the type of the event Copilot CLI records when a
// compaction has replaced the history: what the model sees starts there.
const compactionDone = `"type":"session.compaction_complete"`

// Calls is the package's Calls.
func (History) Calls(ctx context.Context, path, server string) ([]client.TranscriptCall, error) {
	return Calls(ctx, path, server)
}

// Seen reports whether text is in the session's context: recorded after
// its last compaction.
func (History) Seen(ctx context.Context, path, text string) bool {
	return transcript.SeenAfter(ctx, path, text, compactionDone)
}

// Holds reports whether text is anywhere in the record.
func (History) Holds(ctx context.Context, path, text string) bool {
	return transcript.Holds(ctx, path, text)
}
