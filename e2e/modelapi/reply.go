package modelapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// Reply is the model's answer to one request: text and/or tool calls,
// in that order, and the usage it reports.
type Reply struct {
	Text     string
	ToolUses []ToolUse
	// Usage overrides the usage reported; by default input tokens are
	// estimated from the request's size (about 4 bytes a token).
	Usage *Usage
	// StopReason overrides the stop reason ("end_turn", or "tool_use"
	// when there are tool calls).
	StopReason string
	// Error, when set, is answered instead: an HTTP error in the
	// provider's error shape.
	Error *APIError
}

// ToolUse is one tool call of the model.
type ToolUse struct {
	ID    string // default: toolu_e2e_<seq>_<n>
	Name  string
	Input any // marshalled to the arguments object; json.RawMessage and string (holding the object) are sent as they are
}

// Usage is a reply's token usage. Push InputTokens (or the cache counts)
// near the host's context window to make it compact.
type Usage struct {
	InputTokens              int
	OutputTokens             int
	CacheCreationInputTokens int
	CacheReadInputTokens     int
}

// APIError is an error reply.
type APIError struct {
	Status  int    // HTTP status, e.g. 400, 429, 529
	Type    string // e.g. invalid_request_error, overloaded_error
	Message string
}

// Text is a Reply of text only.
func Text(s string) Reply { return Reply{Text: s} }

// Call is a Reply of one tool call.
func Call(name string, input any) Reply {
	return Reply{ToolUses: []ToolUse{{Name: name, Input: input}}}
}

// Calls is a Reply of several tool calls in one turn.
func Calls(uses ...ToolUse) Reply { return Reply{ToolUses: uses} }

// inputJSON returns the tool call's arguments as JSON.
func (u ToolUse) inputJSON() (json.RawMessage, error) {
	switch v := u.Input.(type) {
	case nil:
		return json.RawMessage(`{}`), nil
	case json.RawMessage:
		return v, nil
	case string:
		if !json.Valid([]byte(v)) {
			return nil, fmt.Errorf("tool use %s: input %q is not JSON", u.Name, v)
		}
		return json.RawMessage(v), nil
	default:
		return json.Marshal(v)
	}
}

// Responder answers a request. It is called for every request of every
// kind, one at a time (never concurrently), after the request is recorded.
// Returning ok false leaves the request to the server's default: the
// Config.Default responder for side requests, an error for a main turn.
type Responder func(r *Request) (reply Reply, ok bool)

// Script is a Responder for the main conversation: each main request gets
// the next reply in turn; once they are used up, each gets Final.
// Side requests (titles, compaction, ...) fall to the defaults.
type Script struct {
	mu      sync.Mutex
	replies []func(*Request) Reply
	next    int
	// Final answers main requests once the script is used up (default: "Done.").
	Final Reply
}

// NewScript returns a script of fixed replies.
func NewScript(replies ...Reply) *Script {
	s := &Script{Final: Text("Done.")}
	for _, r := range replies {
		s.Then(r)
	}
	return s
}

// Then appends a fixed reply.
func (s *Script) Then(r Reply) *Script {
	return s.ThenFunc(func(*Request) Reply { return r })
}

// ThenFunc appends a reply computed from the request it answers (for
// example from the tool results it carries).
func (s *Script) ThenFunc(f func(*Request) Reply) *Script {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, f)
	return s
}

// Done reports whether every reply has been sent.
func (s *Script) Done() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next >= len(s.replies)
}

// Respond is the Script's Responder.
func (s *Script) Respond(r *Request) (Reply, bool) {
	if r.Kind != KindMain {
		return Reply{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= len(s.replies) {
		return s.Final, true
	}
	f := s.replies[s.next]
	s.next++
	return f(r), true
}

// Phases is a Responder that plays one script at a time: a test Sets the
// next phase's script before the run (or the prompt typed into an
// interactive CLI) that the script answers. Before the first Set it
// leaves every request to the default.
type Phases struct {
	mu  sync.Mutex
	cur *Script
}

// Set makes s the script that answers from now on, and returns it.
func (p *Phases) Set(s *Script) *Script {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur = s
	return s
}

// Respond is the Phases' Responder.
func (p *Phases) Respond(r *Request) (Reply, bool) {
	p.mu.Lock()
	s := p.cur
	p.mu.Unlock()
	if s == nil {
		return Reply{}, false
	}
	return s.Respond(r)
}

// Step is one step of a Steps responder: the first step whose Match
// accepts a request answers it.
type Step struct {
	Match func(*Request) bool
	Reply func(*Request) Reply
	// Once: the step answers one request only.
	Once bool
	used bool
}

// Steps returns a Responder that answers each request with the first
// matching step, in order; a request no step matches falls to the default.
func Steps(steps ...*Step) Responder {
	var mu sync.Mutex
	return func(r *Request) (Reply, bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range steps {
			if s.used || (s.Match != nil && !s.Match(r)) {
				continue
			}
			s.used = s.Once
			return s.Reply(r), true
		}
		return Reply{}, false
	}
}

// Predicates for Steps.

// IsKind matches requests of a kind.
func IsKind(kind string) func(*Request) bool {
	return func(r *Request) bool { return r.Kind == kind }
}

// LastUserContains matches main requests whose last user message contains s.
func LastUserContains(s string) func(*Request) bool {
	return func(r *Request) bool { return r.Kind == KindMain && strings.Contains(r.LastUserText(), s) }
}

// AnswersTool matches main requests whose last user message carries a
// result of the named tool.
func AnswersTool(name string) func(*Request) bool {
	return func(r *Request) bool {
		if r.Kind != KindMain {
			return false
		}
		for _, b := range r.PendingToolResults() {
			if b.Name == name {
				return true
			}
		}
		return false
	}
}
