// Package hook is the Claude Code hook: it keeps a conversation's task
// list with the conversation through every SessionStart. After a
// compaction it compacts the daemon session and hands Claude Code the
// snapshot (which is also the forced TaskList's result); on resume it hands
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
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

func output(context string) Output {
	return Output{HookSpecificOutput: SpecificOutput{HookEventName: "SessionStart", AdditionalContext: context}}
}
