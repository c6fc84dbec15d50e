package qwen

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/host/transcript"
)

// History reads Qwen Code's record of a session, chats/<id>.jsonl: one
// JSON record a line. A call is a functionCall part of an "assistant"
// record; the model reaches an MCP tool it has not loaded through the
// tool_call bridge, {name: "mcp__tasks__TaskCreate", arguments: {...}},
// recorded as that wrapper. Its outcome is a "tool_result" record's
// toolCallResult, by callId.
type History struct{}

// record is the part of a chat record line read here.
type record struct {
	Type    string `json:"type"`
	Message struct {
		Parts []struct {
			FunctionCall *struct {
				ID   string          `json:"id"`
				Name string          `json:"name"`
				Args json.RawMessage `json:"args"`
			} `json:"functionCall"`
		} `json:"parts"`
	} `json:"message"`
	ToolCallResult *struct {
		CallID string `json:"callId"`
		Status string `json:"status"`
	} `json:"toolCallResult"`
}

// bridge is the tool through which the model calls a deferred tool.
const bridge = "tool_call"

// Calls returns the Task calls of the session whose chat record is at
// path (those of the MCP server named server, "" for any), in the order
// made, each with whether it failed; a call with no result is left out.
func Calls(ctx context.Context, path, server string) ([]client.TranscriptCall, error) {
	type call struct {
		client.TranscriptCall
		done bool
	}
	var calls []*call
	at := map[string]*call{}
	err := transcript.Lines(ctx, path, func(line []byte) {
		var r record
		if json.Unmarshal(line, &r) != nil {
			return
		}
		switch r.Type {
		case "assistant":
			for _, p := range r.Message.Parts {
				fc := p.FunctionCall
				if fc == nil || fc.ID == "" {
					continue
				}
				name, args := fc.Name, fc.Args
				if name == bridge {
					var b struct {
						Name      string          `json:"name"`
						Arguments json.RawMessage `json:"arguments"`
					}
					if json.Unmarshal(fc.Args, &b) != nil {
						continue
					}
					name, args = b.Name, b.Arguments
				}
				tool, ok := taskTool(name, server)
				if _, dup := at[fc.ID]; !ok || dup {
					continue
				}
				if len(args) == 0 || string(args) == "null" {
					args = json.RawMessage(`{}`)
				}
				c := &call{TranscriptCall: client.TranscriptCall{Name: tool, Arguments: args, CallID: "qwen-" + fc.ID}}
				at[fc.ID] = c
				calls = append(calls, c)
			}
		case "tool_result":
			if res := r.ToolCallResult; res != nil {
				if c, ok := at[res.CallID]; ok {
					c.done, c.IsError = true, res.Status != "success"
				}
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

// taskTool returns the Task tool that Qwen Code's name for it
// (mcp__<server>__<tool>) names.
func taskTool(name, server string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", false
	}
	i := strings.LastIndex(rest, "__")
	if i < 0 || (server != "" && rest[:i] != server) {
		return "", false
	}
	switch tool := rest[i+2:]; tool {
	case "TaskCreate", "TaskUpdate", "TaskList", "TaskGet":
		return tool, true
	}
	return "", false
}

// compressed marks the record of a compression: what the model sees
// starts there.
const compressed = `"subtype":"chat_compression"`

// Calls is the package's Calls.
func (History) Calls(ctx context.Context, path, server string) ([]client.TranscriptCall, error) {
	return Calls(ctx, path, server)
}

// Seen reports whether text is in the session's context: recorded after
// its last compression.
func (History) Seen(ctx context.Context, path, text string) bool {
	return transcript.SeenAfter(ctx, path, text, compressed)
}

// Holds reports whether text is anywhere in the record.
func (History) Holds(ctx context.Context, path, text string) bool {
	return transcript.Holds(ctx, path, text)
}
