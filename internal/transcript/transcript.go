// Package transcript reads a Claude Code transcript (its JSONL file): the
// Task calls it holds, for rebuilding a conversation's list by replay (the
// seed's own way to restore one), and whether a text is already in the
// model's context.
package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tasksessiond/tasksessiond/client"
)

// maxTranscript bounds how much of a transcript is read.
const maxTranscript = 256 << 20

// entry is the part of a transcript line read here.
type entry struct {
	Type        string `json:"type"`
	IsSidechain bool   `json:"isSidechain"`
	Message     struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type block struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
}

// Calls returns the Task tool calls of the transcript at path, in order,
// each with whether its result was an error, for sessions/replay. The
// tools are those of the MCP server named server ("" takes any server's
// tools of those names). A call with no result (the turn was cut off) is
// left out: the model never learned what it did.
func Calls(path, server string) ([]client.TranscriptCall, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	defer f.Close()
	var calls []client.TranscriptCall
	at := map[string]int{}      // tool_use id -> index in calls
	done := map[string]bool{}   // tool_use ids with a result
	failed := map[string]bool{} // ... whose result was an error
	r := bufio.NewReader(io.LimitReader(f, maxTranscript))
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 && bytes.Contains(line, []byte(`"tool_`)) {
			var e entry
			if json.Unmarshal(line, &e) == nil && !e.IsSidechain {
				var blocks []block
				_ = json.Unmarshal(e.Message.Content, &blocks) // a string content has no blocks
				for _, b := range blocks {
					switch {
					case b.Type == "tool_use":
						name, ok := taskTool(b.Name, server)
						if _, dup := at[b.ID]; !ok || dup {
							continue
						}
						at[b.ID] = len(calls)
						calls = append(calls, client.TranscriptCall{Name: name, Arguments: b.Input, CallID: "claude-" + b.ID})
					case b.Type == "tool_result":
						done[b.ToolUseID] = true
						failed[b.ToolUseID] = failed[b.ToolUseID] || b.IsError
					}
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read transcript: %w", err)
		}
	}
	out := calls[:0]
	for _, c := range calls {
		id := strings.TrimPrefix(c.CallID, "claude-")
		if !done[id] {
			continue
		}
		c.IsError = failed[id]
		out = append(out, c)
	}
	return out, nil
}

// taskTool returns the Task tool that Claude Code's name for it
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

// Seen reports whether the transcript at path holds marker after its last
// compaction (Claude Code's "compact_boundary" entry, Codex CLI's
// "compacted" rollout line): whether the model's context already has it.
func Seen(path, marker string) bool {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > maxTranscript {
		return false
	}
	for _, boundary := range []string{`"compact_boundary"`, `"type":"compacted"`} {
		if i := bytes.LastIndex(b, []byte(boundary)); i >= 0 {
			b = b[i:]
		}
	}
	return bytes.Contains(b, []byte(marker))
}
