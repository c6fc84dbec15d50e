package modelapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// chat is OpenAI's chat completions API (POST /v1/chat/completions), as
// OpenCode's OpenAI-compatible providers speak it: system messages, user
// and assistant messages whose content is a string or an array of parts,
// assistant tool_calls, and one "tool" message per tool result; streaming
// (SSE chunks of delta.content and delta.tool_calls, then [DONE]) or not.
type chat struct{}

type chatRequest struct {
	Model               string          `json:"model"`
	Stream              bool            `json:"stream"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	StreamOptions       json.RawMessage `json:"stream_options"`
	Messages            []chatMessage   `json:"messages"`
	Tools               []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []chatToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// decode maps the chat format onto the view: system and developer messages
// make System; an assistant's tool_calls are tool_use blocks (after its
// text); each "tool" message is a tool_result block, and consecutive ones
// form one user message (as the Messages API carries them), so
// PendingToolResults finds every result of the model's last turn.
func (chat) decode(r *Request) error {
	var in chatRequest
	if err := json.Unmarshal(r.Raw, &in); err != nil {
		return err
	}
	var raws struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(r.Raw, &raws); err != nil {
		return err
	}
	r.Model, r.Stream = in.Model, in.Stream
	r.MaxTokens = in.MaxTokens
	if r.MaxTokens == 0 {
		r.MaxTokens = in.MaxCompletionTokens
	}
	var system []string
	names := map[string]string{} // tool call id -> tool name
	for i, m := range in.Messages {
		raw := raws.Messages[i]
		parts, err := chatParts(m.Content)
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		switch m.Role {
		case "system", "developer":
			for _, p := range parts {
				if p.Type == BlockText {
					system = append(system, p.Text)
				}
			}
		case "tool":
			var texts []string
			for _, p := range parts {
				if p.Type == BlockText {
					texts = append(texts, p.Text)
				}
			}
			b := Block{Type: BlockToolResult, ToolUseID: m.ToolCallID, Name: names[m.ToolCallID], Text: strings.Join(texts, "\n"), Raw: raw}
			if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "user" && isToolResults(r.Messages[n-1]) {
				r.Messages[n-1].Blocks = append(r.Messages[n-1].Blocks, b)
			} else {
				r.Messages = append(r.Messages, Message{Role: "user", Blocks: []Block{b}})
			}
		case "assistant":
			blocks := parts
			for _, c := range m.ToolCalls {
				input := json.RawMessage(c.Function.Arguments)
				if !json.Valid(input) {
					input, _ = json.Marshal(c.Function.Arguments)
				}
				names[c.ID] = c.Function.Name
				cr, _ := json.Marshal(c)
				blocks = append(blocks, Block{Type: BlockToolUse, ToolUseID: c.ID, Name: c.Function.Name, Input: input, Raw: cr})
			}
			r.Messages = append(r.Messages, Message{Role: "assistant", Blocks: blocks})
		default: // user
			r.Messages = append(r.Messages, Message{Role: m.Role, Blocks: parts})
		}
	}
	r.System = strings.Join(system, "\n")
	for _, t := range in.Tools {
		r.Tools = append(r.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, InputSchema: t.Function.Parameters})
	}
	return nil
}

// isToolResults reports whether m holds tool results only.
func isToolResults(m Message) bool {
	for _, b := range m.Blocks {
		if b.Type != BlockToolResult {
			return false
		}
	}
	return len(m.Blocks) > 0
}

// chatParts decodes content that is a string, null, or an array of parts
// ({type: "text", text}, images, ...).
func chatParts(raw json.RawMessage) ([]Block, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil, nil
		}
		return []Block{{Type: BlockText, Text: s, Raw: raw}}, nil
	}
	var in []json.RawMessage
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	out := make([]Block, 0, len(in))
	for _, praw := range in {
		var p struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(praw, &p); err != nil {
			return nil, err
		}
		if p.Type == "text" {
			out = append(out, Block{Type: BlockText, Text: p.Text, Raw: praw})
		} else {
			out = append(out, Block{Type: BlockOther, Raw: praw})
		}
	}
	return out, nil
}

// chatFinish is the reply's finish_reason.
func chatFinish(reply Reply) string {
	switch reason := stopReason(reply); reason {
	case "end_turn", "stop_sequence":
		return "stop"
	case "tool_use":
		return "tool_calls"
	case "max_tokens":
		return "length"
	default:
		return reason
	}
}

// chatUsage is the usage object: prompt_tokens counts cached tokens too,
// as OpenAI reports them (prompt_tokens_details.cached_tokens).
func chatUsage(r *Request, reply Reply) map[string]any {
	u := Usage{InputTokens: estimateTokens(r.Raw), OutputTokens: 10 + len(reply.Text)/4}
	if reply.Usage != nil {
		u = *reply.Usage
	}
	prompt := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	return map[string]any{
		"prompt_tokens":         prompt,
		"completion_tokens":     u.OutputTokens,
		"total_tokens":          prompt + u.OutputTokens,
		"prompt_tokens_details": map[string]int{"cached_tokens": u.CacheReadInputTokens},
	}
}

func (chat) write(w http.ResponseWriter, r *Request, reply Reply) {
	w.Header().Set("x-request-id", fmt.Sprintf("req_e2e_%d", r.Seq))
	if e := reply.Error; e != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(e.Status)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": e.Message, "type": e.Type, "code": nil}})
		return
	}
	type obj = map[string]any
	id := fmt.Sprintf("chatcmpl-e2e-%d", r.Seq)
	created := time.Now().Unix()
	args := make([]string, len(reply.ToolUses))
	for i, u := range reply.ToolUses {
		in, err := u.inputJSON()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		args[i] = string(in)
	}
	usage := chatUsage(r, reply)
	if !r.Stream {
		msg := obj{"role": "assistant", "content": nil}
		if reply.Text != "" {
			msg["content"] = reply.Text
		}
		if len(reply.ToolUses) > 0 {
			var calls []obj
			for i, u := range reply.ToolUses {
				calls = append(calls, obj{"id": u.ID, "type": "function", "function": obj{"name": u.Name, "arguments": args[i]}})
			}
			msg["tool_calls"] = calls
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(obj{
			"id": id, "object": "chat.completion", "created": created, "model": r.Model,
			"choices": []obj{{"index": 0, "message": msg, "finish_reason": chatFinish(reply)}},
			"usage":   usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	chunk := func(delta obj, finish any, extra obj) {
		c := obj{"id": id, "object": "chat.completion.chunk", "created": created, "model": r.Model,
			"choices": []obj{{"index": 0, "delta": delta, "finish_reason": finish}}}
		for k, v := range extra {
			c[k] = v
		}
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk(obj{"role": "assistant", "content": ""}, nil, nil)
	if reply.Text != "" {
		for _, part := range split(reply.Text) {
			chunk(obj{"content": part}, nil, nil)
		}
	}
	for i, u := range reply.ToolUses {
		chunk(obj{"tool_calls": []obj{{"index": i, "id": u.ID, "type": "function", "function": obj{"name": u.Name, "arguments": ""}}}}, nil, nil)
		for _, part := range split(args[i]) {
			chunk(obj{"tool_calls": []obj{{"index": i, "function": obj{"arguments": part}}}}, nil, nil)
		}
	}
	chunk(obj{}, chatFinish(reply), nil)
	// The usage chunk (stream_options.include_usage): no choices.
	b, _ := json.Marshal(obj{"id": id, "object": "chat.completion.chunk", "created": created, "model": r.Model, "choices": []obj{}, "usage": usage})
	fmt.Fprintf(w, "data: %s\n\n", b)
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
