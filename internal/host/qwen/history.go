package qwen

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/host/transcript"
)

// History reads Qwen Code's record of a session, chats/<id>.jsonl: one
// JSON record a line. A call is a functionCall part of an "assistant"
// record; the model reaches an MCP tool it has not loaded through the
// tool_call bridge, {name: "mcp__tasks__TaskCreate", arguments: {...}},
// recorded as that wrapper. Its outcome is a "tool_result" record's
// toolCallResult, by callId. A subagent's turns are recorded apart, in
// <project>/subagents/<session id>/agent-*.jsonl, in the same form.
type History struct{}

// record is the part of a chat record line read here.
type record struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Message   struct {
		Parts []struct {
			FunctionCall *struct {
				ID   string          `json:"id"`
				Name string          `json:"name"`
				Args json.RawMessage `json:"args"`
			} `json:"functionCall"`
			FunctionResponse *struct {
				ID       string `json:"id"`
				Response struct {
					Error json.RawMessage `json:"error"`
				} `json:"response"`
			} `json:"functionResponse"`
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
// path and of its subagents (those of the MCP server named server, "" for
// any), in the order made, each with whether it failed; a call with no
// result is left out.
func Calls(ctx context.Context, path, server string) ([]client.TranscriptCall, error) {
	calls, err := readCalls(ctx, path, server)
	if err != nil {
		return nil, err
	}
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	subs, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(path)), "subagents", id, "*.jsonl"))
	for _, sub := range subs {
		more, err := readCalls(ctx, sub, server)
		if err != nil {
			return nil, fmt.Errorf("subagent record %s: %w", sub, err)
		}
		calls = append(calls, more...)
	}
	// The subagents' writes went to the same list, in the order made.
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].at.Before(calls[j].at) })
	out := make([]client.TranscriptCall, len(calls))
	for i, c := range calls {
		out[i] = c.TranscriptCall
	}
	return out, nil
}

// timedCall is a call and when it was made.
type timedCall struct {
	client.TranscriptCall
	at time.Time
}

// readCalls reads the Task calls of one record file.
func readCalls(ctx context.Context, path, server string) ([]timedCall, error) {
	type call struct {
		timedCall
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
				c := &call{timedCall: timedCall{client.TranscriptCall{Name: tool, Arguments: args, CallID: "qwen-" + fc.ID}, r.Timestamp}}
				at[fc.ID] = c
				calls = append(calls, c)
			}
		case "tool_result":
			if res := r.ToolCallResult; res != nil {
				if c, ok := at[res.CallID]; ok {
					// A subagent's record has no status: an error
					// is then the response's.
					failed := res.Status != "" && res.Status != "success"
					for _, p := range r.Message.Parts {
						if fr := p.FunctionResponse; fr != nil && fr.ID == res.CallID && len(fr.Response.Error) > 0 {
							failed = true
						}
					}
					c.done, c.IsError = true, failed
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	var out []timedCall
	for _, c := range calls {
		if c.done {
			out = append(out, c.timedCall)
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
