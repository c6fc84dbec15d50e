// Package transcript reads a Claude Code transcript (its JSONL file): the
// Task calls it holds, for rebuilding a conversation's list by replay (the
// seed's own way to restore one), and whether a text is already in the
// model's context.
package transcript

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/tasksessiond/tasksessiond/client"
)

// maxTranscript bounds how much of a transcript is read: Calls reads a
// transcript up to this size, and no larger one; Seen reads its last
// maxTranscript bytes.
const maxTranscript = 256 << 20

// maxLine bounds one transcript line that Calls decodes: a longer line
// (a pasted file, an image) is skipped without being held.
const maxLine = 32 << 20

// chunk is how much is read at a time, between looks at the context.
const chunk = 1 << 20

// open opens the transcript at path for reading: a regular file only. A
// FIFO, a device or a socket could block the reader, or never end; it is
// opened without blocking, seen for what it is, and refused.
func open(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("read transcript: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("read transcript: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("read transcript: %s is not a regular file (%v); going on without it", path, fi.Mode().Type())
	}
	return f, fi.Size(), nil
}

// ctxReader stops reading when ctx ends (a hook's timeout, SIGTERM): a
// read of a regular file is not interrupted by either.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, fmt.Errorf("read transcript: %w", err)
	}
	return c.r.Read(p[:min(len(p), chunk)])
}

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
//
// Only a regular file of at most 256 MiB is read, a line of at most 32 MiB
// at a time, and no longer than ctx allows.
func Calls(ctx context.Context, path, server string) ([]client.TranscriptCall, error) {
	f, size, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > maxTranscript {
		return nil, fmt.Errorf("read transcript: %s is %d bytes, over the %d read; going on without it", path, size, maxTranscript)
	}
	var calls []client.TranscriptCall
	at := map[string]int{}      // tool_use id -> index in calls
	done := map[string]bool{}   // tool_use ids with a result
	failed := map[string]bool{} // ... whose result was an error
	r := bufio.NewReaderSize(ctxReader{ctx, io.LimitReader(f, maxTranscript)}, 64<<10)
	var buf []byte
	for {
		line, err := readLine(r, &buf)
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

// readLine returns the next line of r (in *buf), or nil for a line over
// maxLine, which is read past without being kept.
func readLine(r *bufio.Reader, buf *[]byte) ([]byte, error) {
	*buf = (*buf)[:0]
	long := false
	for {
		part, err := r.ReadSlice('\n')
		if !long {
			if len(*buf)+len(part) > maxLine {
				long, *buf = true, (*buf)[:0]
			} else {
				*buf = append(*buf, part...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if long {
			return nil, err
		}
		return *buf, err
	}
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
// It reads a regular file only, its last 256 MiB at most, a chunk at a
// time, and no longer than ctx allows; anything else is not seen.
func Seen(ctx context.Context, path, marker string) bool {
	f, size, err := open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if marker == "" {
		return true
	}
	from := max(size-maxTranscript, 0)
	r := ctxReader{ctx, io.NewSectionReader(f, from, size-from)}
	boundaries := [][]byte{[]byte(`"compact_boundary"`), []byte(`"type":"compacted"`)}
	// Each window is the end of the last (enough that a boundary or the
	// marker across two chunks is whole in one) and the next chunk.
	keep := len(marker)
	for _, b := range boundaries {
		keep = max(keep, len(b))
	}
	keep--
	w := make([]byte, 0, keep+chunk)
	seen := false
	for {
		n, err := io.ReadFull(r, w[len(w):len(w)+chunk])
		w = w[:len(w)+n]
		after := -1 // where the window's last boundary starts
		for _, b := range boundaries {
			if bytes.Contains(w, b) { // quicker than LastIndex, and mostly false
				after = max(after, bytes.LastIndex(w, b))
			}
		}
		if after >= 0 {
			// The whole stream since that boundary is in w.
			seen = bytes.Contains(w[after:], []byte(marker))
		} else {
			seen = seen || bytes.Contains(w, []byte(marker))
		}
		if err != nil {
			return seen && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF))
		}
		w = append(w[:0], w[len(w)-min(keep, len(w)):]...)
	}
}
