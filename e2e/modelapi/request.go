// Package modelapi is a scripted model API for end-to-end tests of agent
// hosts: a real host CLI is pointed at it (ANTHROPIC_BASE_URL and the like),
// every request it sends is recorded and decoded into one provider-neutral
// view, and a test's script decides every reply. A test then asserts on
// exactly what reached the model.
//
// The view (Request, Message, Block, Tool) and the script (Responder,
// Reply) know no provider; each provider's wire format is one file that
// decodes its requests into the view and encodes a Reply in its shape,
// streaming or not: anthropic.go for the Messages API (Claude Code),
// responses.go for OpenAI's Responses API (Codex CLI), chat.go for chat
// completions (OpenCode). A fourth host is a fourth file, if its API is new.
package modelapi

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Kinds of request. Which kind a request is depends on the host (a title
// request of one CLI looks nothing like another's), so a host harness sets
// Config.Classify; requests it does not recognise are KindMain.
const (
	KindMain    = "main"    // a turn of the conversation the test scripts
	KindTitle   = "title"   // the host asks for a session title or topic
	KindCompact = "compact" // the host asks for a summary of the conversation to compact it
	KindSide    = "side"    // any other request the host makes on its own (quota checks, suggestions, ...)
)

// Request is one recorded request, decoded.
type Request struct {
	Seq      int         // 1, 2, 3, ... in arrival order, across kinds
	Provider string      // "anthropic"
	Path     string      // the URL path, e.g. /v1/messages
	Header   http.Header // as received
	Raw      []byte      // the body as received
	Kind     string      // KindMain, KindTitle, ...

	Model     string
	Stream    bool
	MaxTokens int
	System    string    // the system prompt's text blocks, joined by "\n"
	Messages  []Message // the conversation, oldest first
	Tools     []Tool    // the tools offered to the model

	// Reply is what the server answered (set once it has).
	Reply Reply
}

// Message is one message of the conversation.
type Message struct {
	Role   string // user or assistant
	Blocks []Block
}

// Block types.
const (
	BlockText       = "text"
	BlockToolUse    = "tool_use"
	BlockToolResult = "tool_result"
	BlockOther      = "other" // images, thinking, documents: Raw holds it
)

// Block is one content block of a message.
type Block struct {
	Type string
	Text string // a text block's text; a tool result's text (its text parts joined by "\n")

	ToolUseID string          // tool_use and tool_result: the call's id
	Name      string          // tool_use, and tool_result (resolved from the call it answers, in this request)
	Input     json.RawMessage // tool_use: the arguments
	IsError   bool            // tool_result
	Raw       json.RawMessage // the block as sent
}

// Tool is a tool offered to the model.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
}

// Text returns the message's text: its text blocks and tool results, joined by "\n".
func (m Message) Text() string {
	var parts []string
	for _, b := range m.Blocks {
		if b.Type == BlockText || b.Type == BlockToolResult {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// LastUserText returns the text of the last user message (tool results
// included), or "".
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text()
		}
	}
	return ""
}

// LastUser returns the last user message.
func (r *Request) LastUser() (Message, bool) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i], true
		}
	}
	return Message{}, false
}

// FirstUserText returns the text of the first user message, or "".
func (r *Request) FirstUserText() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Text()
		}
	}
	return ""
}

// ToolResults returns the results, in order, of every call to the named
// tool in this request's conversation ("" for every tool).
func (r *Request) ToolResults(name string) []Block {
	var out []Block
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			if b.Type == BlockToolResult && (name == "" || b.Name == name) {
				out = append(out, b)
			}
		}
	}
	return out
}

// ToolUses returns the model's calls, in order, of the named tool in this
// request's conversation ("" for every tool).
func (r *Request) ToolUses(name string) []Block {
	var out []Block
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			if b.Type == BlockToolUse && (name == "" || b.Name == name) {
				out = append(out, b)
			}
		}
	}
	return out
}

// PendingToolResults returns the tool results in the last user message:
// what the host answers to the model's previous turn.
func (r *Request) PendingToolResults() []Block {
	m, ok := r.LastUser()
	if !ok {
		return nil
	}
	var out []Block
	for _, b := range m.Blocks {
		if b.Type == BlockToolResult {
			out = append(out, b)
		}
	}
	return out
}

// HasTool reports whether the named tool is offered.
func (r *Request) HasTool(name string) bool {
	_, ok := r.Tool(name)
	return ok
}

// Tool returns the named tool, if offered.
func (r *Request) Tool(name string) (Tool, bool) {
	for _, t := range r.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// ToolNames returns the names of the tools offered, in order.
func (r *Request) ToolNames() []string {
	out := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		out[i] = t.Name
	}
	return out
}

// AllText returns everything the model reads as text: the system prompt,
// then every message's text blocks and tool results, and the tool calls'
// arguments, one per line.
func (r *Request) AllText() string {
	var b strings.Builder
	b.WriteString(r.System)
	for _, m := range r.Messages {
		for _, bl := range m.Blocks {
			b.WriteByte('\n')
			switch bl.Type {
			case BlockToolUse:
				b.Write(bl.Input)
			default:
				b.WriteString(bl.Text)
			}
		}
	}
	return b.String()
}

// ConversationText is AllText without the system prompt.
func (r *Request) ConversationText() string {
	c := *r
	c.System = ""
	return strings.TrimPrefix(c.AllText(), "\n")
}
