package copilot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"

	"github.com/tasksessiond/tasksessiond/internal/hook"
	"github.com/tasksessiond/tasksessiond/internal/host"
)

// Copilot CLI's hooks (~/.copilot/hooks/*.json, "version": 1, one command
// per event) get a JSON object that does not name its event: each event's
// fields tell it (sessionStart: source; userPromptSubmitted: prompt;
// preCompact: trigger and transcriptPath; preMcpToolCall: serverName and
// toolName; postToolUse: toolResult). What a hook prints is read by the
// event: additionalContext (sessionStart, userPromptSubmitted,
// postToolUse) reaches the model; metaToUse (preMcpToolCall) is the
// call's _meta.
//
// No hook fires after a compaction. preCompact compacts the daemon
// session and owes the model its list; the next hook that can add context
// delivers it once: postToolUse after the next tool call within the same
// turn (an automatic compaction comes in the middle of one),
// userPromptSubmitted at the next prompt, sessionStart of the next run
// (--resume).

// input is a Copilot CLI hook's input: the fields of the events served.
type input struct {
	SessionID      string         `json:"sessionId"`
	Source         string         `json:"source"`         // sessionStart: new, startup or resume
	Prompt         *string        `json:"prompt"`         // userPromptSubmitted
	Trigger        string         `json:"trigger"`        // preCompact: manual or auto
	TranscriptPath string         `json:"transcriptPath"` // preCompact
	ServerName     string         `json:"serverName"`     // preMcpToolCall
	ToolName       string         `json:"toolName"`       // preMcpToolCall
	Meta           map[string]any `json:"_meta"`          // preMcpToolCall
	ToolResult     map[string]any `json:"toolResult"`     // postToolUse
	// AgentID is a subagent's (its own session's id, which sessionId
	// then is too); "" for the session's own calls.
	AgentID string `json:"agentId"`
}

// The events, as Copilot CLI names them in its hooks files.
const (
	sessionStart        = "sessionStart"
	userPromptSubmitted = "userPromptSubmitted"
	preCompact          = "preCompact"
	preMcpToolCall      = "preMcpToolCall"
	postToolUse         = "postToolUse"
)

// HookEvents are the events the hook serves, for setup.
var HookEvents = []string{sessionStart, userPromptSubmitted, preCompact, preMcpToolCall, postToolUse}

func (in input) event() string {
	switch {
	case in.ToolResult != nil:
		return postToolUse
	case in.ServerName != "" && in.ToolName != "":
		return preMcpToolCall
	case in.Source != "":
		return sessionStart
	case in.Trigger != "" || in.TranscriptPath != "":
		return preCompact
	case in.Prompt != nil:
		return userPromptSubmitted
	}
	return ""
}

// contextOutput is what sessionStart and userPromptSubmitted print.
type contextOutput struct {
	AdditionalContext string `json:"additionalContext"`
}

// metaOutput is what preMcpToolCall prints.
type metaOutput struct {
	MetaToUse map[string]any `json:"metaToUse"`
}

// maxInput bounds a hook's input (a preMcpToolCall's carries the call's
// arguments).
const maxInput = 8 << 20

// Hook is "tasksessiond hook copilot".
func (h Host) Hook(ctx context.Context, cfg hook.Config, e host.Env, r io.Reader) (any, error) {
	var in input
	if err := hook.Decode(r, maxInput, h.Title(), &in); err != nil {
		return nil, err
	}
	if cfg.Server == "" {
		cfg.Server = "tasks"
	}
	cfg.ToolPrefix = cfg.Server + "-" // the model sees tasks-TaskCreate
	cfg.History = History{}
	if in.SessionID == "" && cfg.SessionID == "" {
		return nil, errors.New("no session: the input has no sessionId and no --session was given")
	}
	id := in.SessionID
	// What is owed is keyed by the conversation, whose id stays across
	// compaction; the daemon session the list is in is cfg's when set.
	switch ev := in.event(); ev {
	case preMcpToolCall:
		if in.ServerName != cfg.Server || id == "" || cfg.SessionID != "" {
			return nil, fmt.Errorf("%w: a call of server %q", hook.ErrNothing, in.ServerName)
		}
		if in.AgentID != "" {
			// A subagent's hook names the subagent's own session: its
			// call goes, unnamed, to the one the bridge serves, its
			// root's, whose list it works on.
			return nil, fmt.Errorf("%w: a call of subagent %s", hook.ErrNothing, in.AgentID)
		}
		meta := maps.Clone(in.Meta)
		if meta == nil {
			meta = map[string]any{}
		}
		meta[metaKey] = id
		return metaOutput{MetaToUse: meta}, nil
	case preCompact:
		succ, err := hook.Compact(ctx, cfg, id)
		if err != nil {
			return nil, err
		}
		if err := hook.Owe(e.RuntimeDir, name, owedKey(cfg, id), succ); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: session %s compacted to %s; its list is owed to the next prompt or resume", hook.ErrNothing, id, succ)
	case userPromptSubmitted, postToolUse:
		return deliver(ctx, cfg, e, id)
	case sessionStart:
		if out, err := deliver(ctx, cfg, e, id); !errors.Is(err, hook.ErrNothing) {
			return out, err
		}
		source := in.Source
		if source == "new" {
			source = "startup"
		}
		out, err := hook.Run(ctx, cfg, hook.Input{SessionID: id, HookEventName: "SessionStart", Source: source,
			TranscriptPath: eventsFile(e.Getenv, id)})
		if err != nil {
			return nil, err
		}
		return contextOutput{AdditionalContext: out.HookSpecificOutput.AdditionalContext}, nil
	default:
		return nil, fmt.Errorf("%w: an event the hook does not serve", hook.ErrNothing)
	}
}

// owedKey is what a list is owed under: the daemon session given, else
// the conversation.
func owedKey(cfg hook.Config, id string) string {
	if cfg.SessionID != "" {
		return cfg.SessionID
	}
	return id
}

// deliver gives the model the list owed to conversation id since a
// compaction, once.
func deliver(ctx context.Context, cfg hook.Config, e host.Env, id string) (any, error) {
	succ := hook.Owed(e.RuntimeDir, name, owedKey(cfg, id))
	if succ == "" {
		return nil, fmt.Errorf("%w: no list is owed to %s", hook.ErrNothing, id)
	}
	text, err := hook.Carried(ctx, cfg, succ)
	if err != nil {
		// Owed still: the next hook tries again.
		if oerr := hook.Owe(e.RuntimeDir, name, owedKey(cfg, id), succ); oerr != nil && cfg.Warn != nil {
			cfg.Warn(oerr)
		}
		return nil, err
	}
	return contextOutput{AdditionalContext: text}, nil
}

// Quiet is nothing: Copilot CLI reads an empty stdout as nothing to add
// (and a preMcpToolCall that prints nothing keeps the call's _meta).
func (Host) Quiet() any { return nil }
