package modelapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// anthropic is the Messages API (POST /v1/messages).
type anthropic struct{}

type anthropicRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (anthropic) decode(r *Request) error {
	var in anthropicRequest
	if err := json.Unmarshal(r.Raw, &in); err != nil {
		return err
	}
	r.Model, r.MaxTokens, r.Stream = in.Model, in.MaxTokens, in.Stream
	system, err := anthropicBlocks(in.System)
	if err != nil {
		return fmt.Errorf("system: %w", err)
	}
	var texts []string
	for _, b := range system {
		texts = append(texts, b.Text)
	}
	r.System = strings.Join(texts, "\n")
	names := map[string]string{} // tool_use id -> tool name
	for i, m := range in.Messages {
		blocks, err := anthropicBlocks(m.Content)
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		for j := range blocks {
			switch blocks[j].Type {
			case BlockToolUse:
				names[blocks[j].ToolUseID] = blocks[j].Name
			case BlockToolResult:
				blocks[j].Name = names[blocks[j].ToolUseID]
			}
		}
		r.Messages = append(r.Messages, Message{Role: m.Role, Blocks: blocks})
	}
	for _, t := range in.Tools {
		r.Tools = append(r.Tools, Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	return nil
}

// anthropicBlocks decodes content that is a string or an array of blocks.
func anthropicBlocks(raw json.RawMessage) ([]Block, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []Block{{Type: BlockText, Text: s, Raw: raw}}, nil
	}
	var in []json.RawMessage
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	out := make([]Block, 0, len(in))
	for _, braw := range in {
		var b anthropicBlock
		if err := json.Unmarshal(braw, &b); err != nil {
			return nil, err
		}
		switch b.Type {
		case "text":
			out = append(out, Block{Type: BlockText, Text: b.Text, Raw: braw})
		case "tool_use":
			out = append(out, Block{Type: BlockToolUse, ToolUseID: b.ID, Name: b.Name, Input: b.Input, Raw: braw})
		case "tool_result":
			parts, err := anthropicBlocks(b.Content)
			if err != nil {
				return nil, fmt.Errorf("tool_result %s: %w", b.ToolUseID, err)
			}
			var texts []string
			for _, p := range parts {
				if p.Type == BlockText {
					texts = append(texts, p.Text)
				}
			}
			out = append(out, Block{Type: BlockToolResult, ToolUseID: b.ToolUseID, Text: strings.Join(texts, "\n"), IsError: b.IsError, Raw: braw})
		default:
			out = append(out, Block{Type: BlockOther, Raw: braw})
		}
	}
	return out, nil
}

func (anthropic) usage(r *Request, reply Reply) Usage {
	if reply.Usage != nil {
		return *reply.Usage
	}
	return Usage{InputTokens: estimateTokens(r.Raw), OutputTokens: 10 + len(reply.Text)/4}
}

func anthropicUsage(u Usage) map[string]int {
	return map[string]int{
		"input_tokens":                u.InputTokens,
		"output_tokens":               u.OutputTokens,
		"cache_creation_input_tokens": u.CacheCreationInputTokens,
		"cache_read_input_tokens":     u.CacheReadInputTokens,
	}
}

func stopReason(reply Reply) string {
	switch {
	case reply.StopReason != "":
		return reply.StopReason
	case len(reply.ToolUses) > 0:
		return "tool_use"
	default:
		return "end_turn"
	}
}

func (a anthropic) write(w http.ResponseWriter, r *Request, reply Reply) {
	w.Header().Set("request-id", fmt.Sprintf("req_e2e_%d", r.Seq))
	if e := reply.Error; e != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(e.Status)
		json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]string{"type": e.Type, "message": e.Message}})
		return
	}
	id := fmt.Sprintf("msg_e2e_%d", r.Seq)
	usage := a.usage(r, reply)
	type block = map[string]any
	var content []block
	if reply.Text != "" {
		content = append(content, block{"type": "text", "text": reply.Text})
	}
	inputs := make([]json.RawMessage, len(reply.ToolUses))
	for i, u := range reply.ToolUses {
		in, err := u.inputJSON()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		inputs[i] = in
		content = append(content, block{"type": "tool_use", "id": u.ID, "name": u.Name, "input": in})
	}
	if !r.Stream {
		w.Header().Set("Content-Type", "application/json")
		if content == nil {
			content = []block{}
		}
		json.NewEncoder(w).Encode(map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": r.Model,
			"content": content, "stop_reason": stopReason(reply), "stop_sequence": nil,
			"usage": anthropicUsage(usage),
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	ev := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	start := usage
	start.OutputTokens = 1
	ev("message_start", block{"type": "message_start", "message": block{
		"id": id, "type": "message", "role": "assistant", "model": r.Model, "content": []block{},
		"stop_reason": nil, "stop_sequence": nil, "usage": anthropicUsage(start),
	}})
	ev("ping", block{"type": "ping"})
	index := 0
	if reply.Text != "" {
		ev("content_block_start", block{"type": "content_block_start", "index": index, "content_block": block{"type": "text", "text": ""}})
		for _, chunk := range split(reply.Text) {
			ev("content_block_delta", block{"type": "content_block_delta", "index": index, "delta": block{"type": "text_delta", "text": chunk}})
		}
		ev("content_block_stop", block{"type": "content_block_stop", "index": index})
		index++
	}
	for i, u := range reply.ToolUses {
		ev("content_block_start", block{"type": "content_block_start", "index": index, "content_block": block{"type": "tool_use", "id": u.ID, "name": u.Name, "input": block{}}})
		for _, chunk := range split(string(inputs[i])) {
			ev("content_block_delta", block{"type": "content_block_delta", "index": index, "delta": block{"type": "input_json_delta", "partial_json": chunk}})
		}
		ev("content_block_stop", block{"type": "content_block_stop", "index": index})
		index++
	}
	ev("message_delta", block{"type": "message_delta", "delta": block{"stop_reason": stopReason(reply), "stop_sequence": nil},
		"usage": block{"output_tokens": usage.OutputTokens}})
	ev("message_stop", block{"type": "message_stop"})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// split cuts s in two at a rune boundary, so a client must assemble deltas.
func split(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	i := len(s) / 2
	for i > 0 && !utf8RuneStart(s[i]) {
		i--
	}
	if i == 0 {
		return []string{s}
	}
	return []string{s[:i], s[i:]}
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
