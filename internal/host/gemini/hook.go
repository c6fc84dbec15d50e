package gemini

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/binding"
	"github.com/tasksessiond/tasksessiond/internal/hook"
	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

// Gemini CLI's hooks get Claude Code's input (session_id, transcript_path,
// cwd, hook_event_name, source) and read the same output, so SessionStart
// is Run's. Two things differ:
//
//   - No hook is told about a compression after it (SessionStart fires for
//     startup, resume and clear only), and the compressed history starts
//     with the summarizer's <state_snapshot>. The BeforeModel hook sees
//     every request's text and may rewrite it: when the request holds a
//     snapshot it appends the list to that message, so every request after
//     a compression holds the list once (the change is not stored).
//   - Gemini CLI gives no hook its pid. It runs a hook with bash -c, which
//     execs a lone command, and starts the MCP server as its own child:
//     the hook's nearest ancestor that is not a shell is the process whose
//     bridge it binds (GeminiHostPID).

// GeminiInput is a Gemini CLI hook's input: Input, and for BeforeModel the
// request about to be sent (its text only, one message per content).
type GeminiInput struct {
	hook.Input
	LLMRequest *struct {
		Messages []GeminiMessage `json:"messages"`
	} `json:"llm_request"`
}

// GeminiMessage is one message of a BeforeModel hook's llm_request.
type GeminiMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ReadGeminiInput decodes a Gemini CLI hook's input.
func ReadGeminiInput(r io.Reader) (GeminiInput, error) {
	var in GeminiInput
	return in, hook.Decode(r, maxGeminiInput, "Gemini CLI", &in)
}

// maxGeminiInput bounds a Gemini hook's input: BeforeModel's carries the
// request's text, the whole conversation (a context window of about a
// million tokens).
const maxGeminiInput = 64 << 20

// snapshotTag marks the message Gemini CLI's compression puts first: the
// summarizer's state snapshot.
const snapshotTag = "<state_snapshot>"

// RunGemini does what the hook does for a Gemini CLI event and returns
// what to print (nil: nothing for the model).
func RunGemini(ctx context.Context, cfg hook.Config, in GeminiInput) (any, error) {
	if cfg.Server == "" {
		cfg.Server = "tasks"
	}
	if cfg.ToolPrefix == "" {
		cfg.ToolPrefix = "mcp_" + cfg.Server + "_" // mcp_tasks_TaskCreate
	}
	switch in.HookEventName {
	case "SessionStart":
		// Gemini CLI has no fork, and its transcript (one JSON document)
		// is no record the bridge could rebuild a list from: the binding
		// names the session only. The transcript still tells a resume
		// whether the conversation already holds the list.
		if bind := cfg.Bind; bind != nil {
			cfg.Bind = func(c binding.Conversation) error {
				c.Transcript = ""
				return bind(c)
			}
		}
		out, err := hook.Run(ctx, cfg, in.Input)
		if err != nil {
			return nil, err
		}
		return out, nil
	case "BeforeModel":
		return beforeModel(ctx, cfg, in)
	}
	return nil, fmt.Errorf("%w: the hook acts on SessionStart and BeforeModel, not %q", hook.ErrNothing, in.HookEventName)
}

// BeforeModelOutput rewrites the request's messages: the first len(Messages)
// text-bearing contents get these texts (their other parts kept), the rest
// stay as they were.
type BeforeModelOutput struct {
	HookSpecificOutput struct {
		HookEventName string `json:"hookEventName"`
		LLMRequest    struct {
			Messages []GeminiMessage `json:"messages"`
		} `json:"llm_request"`
	} `json:"hookSpecificOutput"`
}

// beforeModel appends the list to the snapshot message of a compressed
// history; a request without one is left alone, with no daemon asked.
func beforeModel(ctx context.Context, cfg hook.Config, in GeminiInput) (any, error) {
	if in.LLMRequest == nil {
		return nil, fmt.Errorf("%w: no llm_request", hook.ErrNothing)
	}
	msgs := in.LLMRequest.Messages
	at := -1
	for i, m := range msgs {
		if m.Role == "user" && strings.Contains(m.Content, snapshotTag) {
			at = i
			break
		}
	}
	if at < 0 {
		return nil, fmt.Errorf("%w: no compression in this request", hook.ErrNothing)
	}
	id := cfg.SessionID
	if id == "" {
		id = in.SessionID
	}
	if id == "" {
		return nil, errors.New("no session: the input has no session_id and no --session was given")
	}
	if cfg.MaxChars <= 0 {
		cfg.MaxChars = tools.MaxHookChars
	}
	if cfg.Measure == nil {
		cfg.Measure = tools.Length
	}
	c, err := cfg.Dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	s, err := c.Head(ctx, id)
	if errors.Is(err, client.ErrSessionNotFound) {
		return nil, fmt.Errorf("%w: session %s has no task list", hook.ErrNothing, id)
	}
	if err != nil {
		return nil, err
	}
	if s.Counts.Total == 0 {
		return nil, fmt.Errorf("%w: session %s has no tasks", hook.ErrNothing, s.ID)
	}
	snap, err := c.Snapshot(ctx, s.ID)
	if err != nil {
		return nil, fmt.Errorf("read the tasks of %s: %w", s.ID, err)
	}
	names := tools.PrefixedNames(cfg.ToolPrefix)
	intro := fmt.Sprintf("Task list carried over from before the context was compressed, kept by tasksessiond: the same tasks with the same taskids. "+
		"Keep it current with %s; the next %s gets #%d.", names.Update, names.Create, snap.NextTaskid)
	text := hook.Compose(cfg, intro, snap.Tasks, s.ID)
	for _, m := range msgs {
		// A resume's hook context (kept in the tail) holds it already.
		if strings.Contains(m.Content, hook.Marker(text)) {
			return nil, fmt.Errorf("%w: the request already holds this list", hook.ErrNothing)
		}
	}
	var out BeforeModelOutput
	out.HookSpecificOutput.HookEventName = "BeforeModel"
	out.HookSpecificOutput.LLMRequest.Messages = append(append([]GeminiMessage(nil), msgs[:at]...),
		GeminiMessage{Role: "user", Content: msgs[at].Content + "\n\n" + text})
	return out, nil
}

// GeminiHostPID returns the pid of the Gemini CLI process that ran this
// hook (host.HookHostPID). 0 when it cannot be told.
func GeminiHostPID(parent int) int { return host.HookHostPID(parent) }

// BindGemini returns a Config.Bind that records ids for Gemini CLI's
// process pid in dir (the daemon's runtime directory), where its bridge
// reads them.
func BindGemini(dir string, pid int) func(binding.Conversation) error {
	return hook.BindTo(dir, name, pid)
}
