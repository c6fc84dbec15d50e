// Package hook is the Claude Code hook: it gives a Claude Code session the
// seed's behaviour across compaction and resume. On SessionStart after a
// compaction it compacts the bound daemon session and hands Claude Code
// the injected snapshot message and the forced TaskList result; on resume
// and startup it hands it the current list.
//
// A hook must never break its host: whatever goes wrong, it prints nothing
// for the model and says why on stderr, and the command exits 0.
package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tasksessiond/tasksessiond/client"
)

// Input is the JSON Claude Code writes to a hook's standard input (the
// fields this hook reads).
type Input struct {
	SessionID      string `json:"session_id"`
	HookEventName  string `json:"hook_event_name"`
	Source         string `json:"source"` // SessionStart: startup, resume, clear or compact
	Cwd            string `json:"cwd"`
	TranscriptPath string `json:"transcript_path"`
}

// Output is what the hook prints: context added for the model.
type Output struct {
	HookSpecificOutput SpecificOutput `json:"hookSpecificOutput"`
}

// SpecificOutput is the SessionStart part of Output.
type SpecificOutput struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext"`
}

// maxInput bounds the hook's input; Claude Code's is a few hundred bytes.
const maxInput = 1 << 20

// Config is where the hook finds its daemon and session.
type Config struct {
	Socket string
	// SessionID overrides the input's session_id (for a session bound
	// with --session in the MCP server's configuration).
	SessionID string
}

// ReadInput decodes the hook's input.
func ReadInput(r io.Reader) (Input, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return Input{}, fmt.Errorf("read hook input: %w", err)
	}
	if len(b) > maxInput {
		return Input{}, fmt.Errorf("hook input is over %d bytes", maxInput)
	}
	var in Input
	if err := json.Unmarshal(b, &in); err != nil {
		return Input{}, fmt.Errorf("hook input is not the JSON Claude Code sends: %w", err)
	}
	return in, nil
}

// ErrNothing says the hook has nothing to add, and why.
var ErrNothing = errors.New("nothing to add")

// Run does what the hook does for in and returns the output to print.
// An error wrapping ErrNothing is not a failure: the session has no list.
func Run(ctx context.Context, cfg Config, in Input) (Output, error) {
	if in.HookEventName != "SessionStart" {
		return Output{}, fmt.Errorf("%w: the hook acts on SessionStart, not %q", ErrNothing, in.HookEventName)
	}
	id := cfg.SessionID
	if id == "" {
		id = in.SessionID
	}
	if id == "" {
		return Output{}, errors.New("no session: the input has no session_id and no --session was given")
	}
	switch in.Source {
	case "compact", "resume", "startup":
	default:
		return Output{}, fmt.Errorf("%w: source %q carries no list", ErrNothing, in.Source)
	}
	c, err := client.Dial(ctx, cfg.Socket)
	if err != nil {
		return Output{}, err
	}
	defer c.Close()
	s, err := c.Head(ctx, id)
	if errors.Is(err, client.ErrSessionNotFound) {
		return Output{}, fmt.Errorf("%w: session %s has no task list yet", ErrNothing, id)
	}
	if err != nil {
		return Output{}, fmt.Errorf("session %s: %w", id, err)
	}
	if s.Counts.Total == 0 {
		return Output{}, fmt.Errorf("%w: session %s has no tasks", ErrNothing, s.ID)
	}
	if in.Source == "compact" {
		return compacted(ctx, c, s.ID)
	}
	return current(ctx, c, s.ID)
}

// compacted compacts head and returns what the successor starts with.
func compacted(ctx context.Context, c *client.Client, head string) (Output, error) {
	out, err := c.Compact(ctx, client.Compact{SessionID: head})
	if err != nil {
		return Output{}, fmt.Errorf("compact %s: %w", head, err)
	}
	var b strings.Builder
	for _, m := range out.Messages {
		b.WriteString(m.Content)
		b.WriteString("\n\n")
	}
	var forced client.CallToolResult
	if err := json.Unmarshal(out.ForcedCall.Result, &forced); err != nil {
		return Output{}, fmt.Errorf("decode the forced TaskList of %s: %w", out.Session.ID, err)
	}
	fmt.Fprintf(&b, "TaskList was called for you after the compaction (call %s); it returned:\n\n%s\n\n(tasksessiond session %s, the successor of %s.)",
		out.ForcedCall.CallID, forced.Text(), out.Session.ID, head)
	return output(b.String()), nil
}

// current returns head's list, when it has one. It reads as the compact
// worker does: a read that is not the model's is not logged as its call.
func current(ctx context.Context, c *client.Client, head string) (Output, error) {
	r, err := c.CallTool(ctx, client.ToolCall{SessionID: head, Name: "TaskList", Role: "compact_worker"})
	if err != nil {
		return Output{}, fmt.Errorf("list the tasks of %s: %w", head, err)
	}
	if r.IsError {
		return Output{}, fmt.Errorf("list the tasks of %s: %s", head, r.Text())
	}
	return output(fmt.Sprintf("Your task list for this session, kept by tasksessiond (session %s); "+
		"keep it current with TaskUpdate.\n\n%s", head, r.Text())), nil
}

func output(context string) Output {
	return Output{HookSpecificOutput: SpecificOutput{HookEventName: "SessionStart", AdditionalContext: context}}
}
