package hook

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

// maxTranscript bounds how much of a transcript the hook reads.
const maxTranscript = 256 << 20

// entry is the part of a Claude Code transcript line the hook reads.
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

// TranscriptCalls returns the Task tool calls of the Claude Code
// transcript at path, in order, each with whether its result was an
// error, for sessions/replay. The tools are those of the MCP server
// named server. A call with no result (the turn was cut off) is left out:
// the model never learned what it did.
func TranscriptCalls(path, server string) ([]client.TranscriptCall, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	defer f.Close()
	prefix := "mcp__" + server + "__"
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
					case b.Type == "tool_use" && strings.HasPrefix(b.Name, prefix):
						if _, dup := at[b.ID]; dup {
							continue
						}
						at[b.ID] = len(calls)
						calls = append(calls, client.TranscriptCall{Name: strings.TrimPrefix(b.Name, prefix), Arguments: b.Input, CallID: "claude-" + b.ID})
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

// Seen reports whether the transcript at path holds marker after its last
// compaction boundary: whether the model's context already has it.
func Seen(path, marker string) bool {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > maxTranscript {
		return false
	}
	if i := bytes.LastIndex(b, []byte(`"compact_boundary"`)); i >= 0 {
		b = b[i:]
	}
	return bytes.Contains(b, []byte(marker))
}
