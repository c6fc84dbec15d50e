// Package transcript reads a Claude Code transcript or a Codex CLI rollout
// (JSONL files): the Task calls they hold, for rebuilding a conversation's
// list by replay (the seed's own way to restore one), and whether a text is
// already in the model's context.
package transcript

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

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
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Message   struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	// ToolUseResult is what a tool returned, as Claude Code keeps it: the
	// Agent tool's names the subagent (agentId) whose transcript is
	// <session>/subagents/agent-<agentId>.jsonl.
	ToolUseResult json.RawMessage `json:"toolUseResult"`
	// Payload is a Codex CLI rollout line's: an "item_completed" event
	// holds an MCP tool call whole, arguments, status and result.
	// Ordinal numbers a rollout's lines; a fork's session_meta names the
	// thread it was forked from and the first line of that thread's
	// rollout it does not share (Codex CLI 0.169 does not copy the
	// history into the fork's rollout).
	Ordinal int64 `json:"ordinal"`
	Payload struct {
		Type              string `json:"type"`
		ForkedFromID      string `json:"forked_from_id"`
		ForkedFromOrdinal int64  `json:"forked_from_ordinal_exclusive"`
		Item              struct {
			Type      string          `json:"type"`
			ID        string          `json:"id"`
			Server    string          `json:"server"`
			Tool      string          `json:"tool"`
			Arguments json.RawMessage `json:"arguments"`
			Status    string          `json:"status"`
			Result    struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		} `json:"item"`
	} `json:"payload"`
}

type block struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
}

// Calls returns the Task tool calls of the conversation whose transcript
// (Claude Code's, or Codex CLI's rollout) is at path, in the order they
// were made, each with whether its result was an error, for
// sessions/replay: the conversation's own and its subagents' (Claude Code
// 2.1 writes a subagent's turns to <session>/subagents/agent-<id>.jsonl,
// and marks them isSidechain), whose writes went to the same list. A
// Claude Code fork's transcript is a copy of its source's history, and the
// subagents it names are found in the source's directory; a Codex fork's
// rollout names its source thread and the fork point, and the source's
// rollout is read up to there. The tools are those of the MCP server named
// server ("" takes any server's tools of those names). A call with no
// result (the turn was cut off) is left out: the model never learned what
// it did.
//
// Only regular files of at most 256 MiB are read, a line of at most 32 MiB
// at a time, and no longer than ctx allows.
func Calls(ctx context.Context, path, server string) ([]client.TranscriptCall, error) {
	r := reader{ctx: ctx, server: server, at: map[string]int{}, done: map[string]bool{}, failed: map[string]bool{}, agents: map[string]bool{}}
	if err := r.file(path, true, 0); err != nil {
		return nil, err
	}
	// A Codex fork: its source's rollout up to the fork point, and so on
	// up a fork of a fork.
	for depth := 0; r.forkedFrom.id != "" && depth < 8; depth++ {
		from := r.forkedFrom
		r.forkedFrom = fork{}
		if strings.ContainsAny(from.id, `/\*?[`) {
			break
		}
		sessions := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(path)))) // sessions/YYYY/MM/DD/rollout-...
		found, _ := filepath.Glob(filepath.Join(sessions, "*", "*", "*", "rollout-*-"+from.id+".jsonl"))
		if len(found) == 0 {
			break
		}
		if err := r.file(found[0], true, from.before); err != nil {
			return nil, err
		}
	}
	read := map[string]bool{}
	own, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents", "agent-*.jsonl"))
	for _, f := range own {
		read[strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "agent-"), ".jsonl")] = true
		if err := r.file(f, false, 0); err != nil {
			return nil, err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(r.agents)) {
		if read[id] || strings.ContainsAny(id, `/\*?[`) {
			continue
		}
		// A fork's: in its source conversation's directory.
		found, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*", "subagents", "agent-"+id+".jsonl"))
		for _, f := range found {
			if err := r.file(f, false, 0); err != nil {
				return nil, err
			}
		}
	}
	// In the order made: a subagent's calls come while the call that
	// started it runs (or, in the background, beside its parent's).
	sort.SliceStable(r.calls, func(i, j int) bool { return r.calls[i].at.Before(r.calls[j].at) })
	out := make([]client.TranscriptCall, 0, len(r.calls))
	for _, c := range r.calls {
		if !r.done[c.id] {
			continue
		}
		c.call.IsError = r.failed[c.id]
		out = append(out, c.call)
	}
	return out, nil
}

// reader gathers the Task calls of a conversation's transcript files.
type reader struct {
	ctx    context.Context
	server string
	calls  []timed
	at     map[string]int  // tool_use id -> index in calls
	done   map[string]bool // tool_use ids with a result
	failed map[string]bool // ... whose result was an error
	agents map[string]bool // the subagents the conversation started
	// forkedFrom is the Codex thread the last rollout read was forked from.
	forkedFrom fork
}

// fork names a Codex thread and the first ordinal of its rollout that a
// fork of it does not share.
type fork struct {
	id     string
	before int64
}

// timed is a call, its host's id for it, and when it was made.
type timed struct {
	call client.TranscriptCall
	id   string
	at   time.Time
}

// file reads one transcript file (main: the conversation's own, which
// names its subagents), up to the line numbered before (0: all of it).
func (r *reader) file(path string, main bool, before int64) error {
	f, size, err := open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if size > maxTranscript {
		return fmt.Errorf("read transcript: %s is %d bytes, over the %d read; going on without it", path, size, maxTranscript)
	}
	br := bufio.NewReaderSize(ctxReader{r.ctx, io.LimitReader(f, maxTranscript)}, 64<<10)
	var buf []byte
	var last time.Time
	for {
		line, err := readLine(br, &buf)
		if len(bytes.TrimSpace(line)) > 0 && (bytes.Contains(line, []byte(`"tool_`)) || bytes.Contains(line, []byte(`"McpToolCall"`)) ||
			bytes.Contains(line, []byte(`"forked_from_id"`))) {
			var e entry
			if json.Unmarshal(line, &e) == nil && (before <= 0 || e.Ordinal < before) {
				if e.Type == "session_meta" && e.Payload.ForkedFromID != "" {
					r.forkedFrom = fork{e.Payload.ForkedFromID, e.Payload.ForkedFromOrdinal}
				}
				if e.Timestamp.IsZero() {
					e.Timestamp = last // keeps its place after the line before
				}
				last = e.Timestamp
				r.entry(e, main)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read transcript: %w", err)
		}
	}
}

func (r *reader) entry(e entry, main bool) {
	var blocks []block
	_ = json.Unmarshal(e.Message.Content, &blocks) // a string content has no blocks
	for _, b := range blocks {
		switch {
		case b.Type == "tool_use":
			name, ok := taskTool(b.Name, r.server)
			// A subagent that is a fork of its parent has a copy of its
			// parent's history: a call is counted once.
			if _, dup := r.at[b.ID]; !ok || dup {
				continue
			}
			r.at[b.ID] = len(r.calls)
			r.calls = append(r.calls, timed{client.TranscriptCall{Name: name, Arguments: b.Input, CallID: "claude-" + b.ID}, b.ID, e.Timestamp})
		case b.Type == "tool_result":
			r.done[b.ToolUseID] = true
			r.failed[b.ToolUseID] = r.failed[b.ToolUseID] || b.IsError
		}
	}
	if it := e.Payload.Item; e.Type == "event_msg" && e.Payload.Type == "item_completed" && it.Type == "McpToolCall" && it.ID != "" {
		// Codex CLI: the call and its outcome in one event.
		name, ok := taskTool("mcp__"+it.Server+"__"+it.Tool, r.server)
		if _, dup := r.at[it.ID]; ok && !dup {
			r.at[it.ID] = len(r.calls)
			r.calls = append(r.calls, timed{client.TranscriptCall{Name: name, Arguments: it.Arguments, CallID: "codex-" + it.ID}, it.ID, e.Timestamp})
			r.done[it.ID] = it.Status == "completed" || it.Status == "failed"
			r.failed[it.ID] = it.Status == "failed" || it.Result.IsError
		}
	}
	if main && len(e.ToolUseResult) > 0 && bytes.Contains(e.ToolUseResult, []byte(`"agentId"`)) {
		var res struct {
			AgentID string `json:"agentId"`
		}
		if json.Unmarshal(e.ToolUseResult, &res) == nil && res.AgentID != "" {
			r.agents[res.AgentID] = true
		}
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

// Seen reports whether the transcript at path holds marker after its last
// compaction (Claude Code's "compact_boundary" entry, Codex CLI's
// "compacted" rollout line): whether the model's context already has it.
// It reads a regular file only, its last 256 MiB at most, a chunk at a
// time, and no longer than ctx allows; anything else is not seen.
func Seen(ctx context.Context, path, marker string) bool {
	return find(ctx, path, marker, [][]byte{[]byte(`"compact_boundary"`), []byte(`"type":"compacted"`)})
}

// Holds reports whether the transcript at path holds s anywhere (in its
// last 256 MiB), read as Seen reads.
func Holds(ctx context.Context, path, s string) bool { return find(ctx, path, s, nil) }

// find reports whether marker is in the file at path after the last of
// boundaries (anywhere, with none).
func find(ctx context.Context, path, marker string, boundaries [][]byte) bool {
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

// Reader is Calls, Seen and Holds as one value: the history of the hosts
// whose conversations are kept in these files (a hook.History).
type Reader struct{}

// Calls is the package's Calls.
func (Reader) Calls(ctx context.Context, path, server string) ([]client.TranscriptCall, error) {
	return Calls(ctx, path, server)
}

// Seen is the package's Seen.
func (Reader) Seen(ctx context.Context, path, marker string) bool { return Seen(ctx, path, marker) }

// Holds is the package's Holds.
func (Reader) Holds(ctx context.Context, path, s string) bool { return Holds(ctx, path, s) }

// SeenAfter reports whether the file at path holds marker after the last
// of boundaries (a host's own record of a compaction), read as Seen reads:
// Seen for a host whose history is in a format of its own.
func SeenAfter(ctx context.Context, path, marker string, boundaries ...string) bool {
	bs := make([][]byte, len(boundaries))
	for i, b := range boundaries {
		bs[i] = []byte(b)
	}
	return find(ctx, path, marker, bs)
}

// Lines calls fn with each line of the JSONL file at path, in order, read
// as Calls reads a transcript (a regular file of at most 256 MiB, a line
// of at most 32 MiB, which is passed over when longer, no longer than ctx
// allows): for a host whose history is in a format of its own.
func Lines(ctx context.Context, path string, fn func(line []byte)) error {
	f, size, err := open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if size > maxTranscript {
		return fmt.Errorf("read transcript: %s is over %d bytes", path, maxTranscript)
	}
	br := bufio.NewReaderSize(ctxReader{ctx, f}, 64<<10)
	var buf []byte
	for {
		line, err := readLine(br, &buf)
		if len(bytes.TrimSpace(line)) > 0 {
			fn(line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
