// Package hook is the SessionStart hook of the hosts that have one (each
// host's package says how its hook reads and prints): it keeps a
// conversation's task list with the conversation through every
// SessionStart. After a compaction it compacts the daemon session and
// hands the host the snapshot (which is also the forced TaskList's result); on resume it hands
// it the list when the conversation has not seen it yet; a fork, whose new
// conversation the daemon does not know, gets its list by replaying the
// Task calls in its transcript; and every new conversation id (startup,
// /clear, fork) is recorded for the MCP bridge, which serves that list
// from then on.
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

	"github.com/tasksessiond/tasksessiond/client"
)

// Input is the JSON a host writes to a SessionStart hook's standard input
// (the fields this hook reads).
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

// maxInput bounds the hook's input; a SessionStart's is a few hundred bytes.
const maxInput = 1 << 20

// ReadInput decodes the hook's input, as the host called title writes it.
func ReadInput(r io.Reader, title string) (Input, error) {
	var in Input
	return in, Decode(r, maxInput, title, &in)
}

// Decode reads at most max bytes of JSON from r into v, which the host
// called title wrote; its errors are InputErrors.
func Decode(r io.Reader, max int, title string, v any) error {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return &InputError{fmt.Errorf("read hook input: %w", err)}
	}
	if len(b) > max {
		return &InputError{fmt.Errorf("hook input is over %d bytes", max)}
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &InputError{fmt.Errorf("hook input is not the JSON %s sends: %w", title, err)}
	}
	return nil
}

// InputError is input the hook could not read: said as it is, with
// nothing done.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// ErrNothing says the hook has nothing to add, and why.
var ErrNothing = errors.New("nothing to add")

// History reads a host's own record of a conversation, at the path its
// hook input names (transcript_path).
type History interface {
	// Calls returns the Task calls of the conversation (those of the MCP
	// server named server), in the order made, for sessions/replay.
	Calls(ctx context.Context, path, server string) ([]client.TranscriptCall, error)
	// Seen reports whether text is in the model's context: in the
	// history, after its last compaction.
	Seen(ctx context.Context, path, text string) bool
	// Holds reports whether text is anywhere in the history.
	Holds(ctx context.Context, path, text string) bool
}

func output(context string) Output {
	return Output{HookSpecificOutput: SpecificOutput{HookEventName: "SessionStart", AdditionalContext: context}}
}
