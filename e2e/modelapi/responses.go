package modelapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// responses is OpenAI's Responses API (POST /v1/responses), as Codex CLI
// speaks it: "instructions" is the system prompt, "input" the
// conversation as a list of items (messages, function calls, their
// outputs, reasoning, ...), "tools" the functions offered (MCP tools
// grouped in a "namespace" tool). Streamed replies are SSE events
// (response.created, response.output_item.added/done, text and
// function-call argument deltas, response.completed with the usage).
type responses struct{}

type responsesRequest struct {
	Model           string            `json:"model"`
	Stream          bool              `json:"stream"`
	MaxOutputTokens int               `json:"max_output_tokens"`
	Instructions    json.RawMessage   `json:"instructions"`
	Input           json.RawMessage   `json:"input"`
	Tools           []json.RawMessage `json:"tools"`
}

type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Arguments string          `json:"-"`
	Input     string          `json:"input"` // custom_tool_call
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Text      string          `json:"text"`
	// tool_search_call's arguments are an object, not a string.
	SearchArguments json.RawMessage `json:"-"`
	Tools           json.RawMessage `json:"tools"` // tool_search_output
}

func (it *responsesItem) UnmarshalJSON(b []byte) error {
	type plain responsesItem
	var p struct {
		plain
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*it = responsesItem(p.plain)
	var s string
	if json.Unmarshal(p.Arguments, &s) == nil {
		it.Arguments = s
	} else {
		it.SearchArguments = p.Arguments
	}
	return nil
}

type responsesTool struct {
	Type        string            `json:"type"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Parameters  json.RawMessage   `json:"parameters"`
	Tools       []json.RawMessage `json:"tools"` // type namespace
}

// ResponsesToolName is how the view names a tool of a Responses API
// namespace: namespace + name, as Codex CLI joins them when it calls one
// ("mcp__tasks__" + "TaskCreate"; a namespace that does not end in "__"
// gets "__" between the two). A Reply's ToolUse names it so too; the
// provider splits the name again into the function_call's namespace and
// name.
func ResponsesToolName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	if strings.HasSuffix(namespace, "__") {
		return namespace + name
	}
	return namespace + "__" + name
}

func (responses) decode(r *Request) error {
	var in responsesRequest
	if err := json.Unmarshal(r.Raw, &in); err != nil {
		return err
	}
	r.Model, r.Stream, r.MaxTokens = in.Model, in.Stream, in.MaxOutputTokens
	if len(in.Instructions) > 0 && string(in.Instructions) != "null" {
		var s string
		if err := json.Unmarshal(in.Instructions, &s); err != nil {
			return fmt.Errorf("instructions: %w", err)
		}
		r.System = s
	}
	items, err := responsesItems(in.Input)
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	names := map[string]string{} // call_id -> tool name
	var discovered []Tool
	add := func(role string, b Block) {
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role {
			r.Messages[n-1].Blocks = append(r.Messages[n-1].Blocks, b)
			return
		}
		r.Messages = append(r.Messages, Message{Role: role, Blocks: []Block{b}})
	}
	for i, raw := range items {
		var it responsesItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return fmt.Errorf("input item %d: %w", i, err)
		}
		switch it.Type {
		case "message", "":
			blocks, err := responsesContent(it.Content)
			if err != nil {
				return fmt.Errorf("input item %d: %w", i, err)
			}
			if len(blocks) == 0 {
				blocks = []Block{{Type: BlockOther, Raw: raw}}
			}
			for _, b := range blocks {
				add(it.Role, b)
			}
		case "function_call", "custom_tool_call":
			name := ResponsesToolName(it.Namespace, it.Name)
			names[it.CallID] = name
			input := json.RawMessage(it.Arguments)
			if it.Type == "custom_tool_call" {
				input, _ = json.Marshal(it.Input)
			} else if !json.Valid(input) {
				input, _ = json.Marshal(it.Arguments)
			}
			add("assistant", Block{Type: BlockToolUse, ToolUseID: it.CallID, Name: name, Input: input, Raw: raw})
		case "tool_search_call":
			names[it.CallID] = ToolSearch
			add("assistant", Block{Type: BlockToolUse, ToolUseID: it.CallID, Name: ToolSearch, Input: it.SearchArguments, Raw: raw})
		case "tool_search_output":
			// The tools found, offered from now on: in the view's Tools
			// too, as a host that loads tools lists them there.
			found, err := responsesToolList(it.Tools)
			if err != nil {
				return fmt.Errorf("input item %d (%s): %w", i, it.Type, err)
			}
			discovered = append(discovered, found...)
			add("user", Block{Type: BlockToolResult, ToolUseID: it.CallID, Name: ToolSearch, Text: string(it.Tools), Raw: raw})
		case "function_call_output", "custom_tool_call_output":
			text, err := responsesOutput(it.Output)
			if err != nil {
				return fmt.Errorf("input item %d (%s): %w", i, it.Type, err)
			}
			add("user", Block{Type: BlockToolResult, ToolUseID: it.CallID, Name: names[it.CallID], Text: text, Raw: raw})
		default: // reasoning, compaction, web_search_call, ...
			role := it.Role
			if role == "" {
				role = "assistant"
			}
			add(role, Block{Type: BlockOther, Text: it.Text, Raw: raw})
		}
	}
	tools, err := responsesToolList(mustJSON(in.Tools))
	if err != nil {
		return err
	}
	r.Tools = append(tools, discovered...)
	return nil
}

// ToolSearch names Codex's tool search in the view: the Responses API's
// "tool_search" tool (executed by the client), by which the model loads
// deferred tools (MCP servers' namespaces). A ToolUse named so is sent as a
// tool_search_call item, its Input the arguments ({"query": ..., "limit":
// ...}); the host answers with a tool_search_output item holding the tools
// found, which the view shows as the call's result (the tools as JSON) and
// adds to the request's Tools.
const ToolSearch = "tool_search"

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// responsesToolList decodes a list of tools: functions, namespaces of
// functions (flattened, see ResponsesToolName), and built-in tools by
// type (tool_search, web_search, custom, ...).
func responsesToolList(raw json.RawMessage) ([]Tool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	var out []Tool
	for _, raw := range list {
		var t responsesTool
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("tool: %w", err)
		}
		switch {
		case t.Type == "namespace":
			for _, sub := range t.Tools {
				var st responsesTool
				if err := json.Unmarshal(sub, &st); err != nil {
					return nil, fmt.Errorf("tool %s: %w", t.Name, err)
				}
				out = append(out, Tool{Name: ResponsesToolName(t.Name, st.Name), Description: st.Description, InputSchema: st.Parameters})
			}
		case t.Name == "":
			out = append(out, Tool{Name: t.Type, Description: t.Description, InputSchema: t.Parameters})
		default:
			out = append(out, Tool{Name: t.Name, Description: t.Description, InputSchema: t.Parameters})
		}
	}
	return out, nil
}

// responsesItems decodes input that is a string (one user message) or a list of items.
func responsesItems(raw json.RawMessage) ([]json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		item, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": s})
		return []json.RawMessage{item}, nil
	}
	var items []json.RawMessage
	err := json.Unmarshal(raw, &items)
	return items, err
}

// responsesContent decodes a message's content: a string, or parts
// (input_text, output_text, input_image, ...).
func responsesContent(raw json.RawMessage) ([]Block, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []Block{{Type: BlockText, Text: s, Raw: raw}}, nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, err
	}
	out := make([]Block, 0, len(parts))
	for _, p := range parts {
		var part struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(p, &part); err != nil {
			return nil, err
		}
		switch part.Type {
		case "input_text", "output_text", "text":
			out = append(out, Block{Type: BlockText, Text: part.Text, Raw: p})
		default:
			out = append(out, Block{Type: BlockOther, Raw: p})
		}
	}
	return out, nil
}

// responsesOutput decodes a function call's output: a string, or content
// parts whose texts are joined by "\n".
func responsesOutput(raw json.RawMessage) (string, error) {
	blocks, err := responsesContent(raw)
	if err != nil {
		return "", err
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == BlockText {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// responsesNamespaces maps each namespaced tool's view name to its
// namespace and name, from the request's tools.
func responsesNamespaces(r *Request) map[string][2]string {
	var in struct {
		Tools []responsesTool `json:"tools"`
		Input []struct {
			Type  string          `json:"type"`
			Tools []responsesTool `json:"tools"`
		} `json:"input"`
	}
	json.Unmarshal(r.Raw, &in)
	tools := in.Tools
	for _, it := range in.Input {
		if it.Type == "tool_search_output" {
			tools = append(tools, it.Tools...)
		}
	}
	out := map[string][2]string{}
	for _, t := range tools {
		if t.Type != "namespace" {
			continue
		}
		for _, sub := range t.Tools {
			var st responsesTool
			if json.Unmarshal(sub, &st) == nil {
				out[ResponsesToolName(t.Name, st.Name)] = [2]string{t.Name, st.Name}
			}
		}
	}
	return out
}

func (responses) usage(r *Request, reply Reply) Usage {
	if reply.Usage != nil {
		return *reply.Usage
	}
	return Usage{InputTokens: estimateTokens(r.Raw), OutputTokens: 10 + len(reply.Text)/4}
}

func responsesUsage(u Usage) map[string]any {
	in := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	return map[string]any{
		"input_tokens":          in,
		"input_tokens_details":  map[string]int{"cached_tokens": u.CacheReadInputTokens},
		"output_tokens":         u.OutputTokens,
		"output_tokens_details": map[string]int{"reasoning_tokens": 0},
		"total_tokens":          in + u.OutputTokens,
	}
}

func (p responses) write(w http.ResponseWriter, r *Request, reply Reply) {
	w.Header().Set("x-request-id", fmt.Sprintf("req_e2e_%d", r.Seq))
	if e := reply.Error; e != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(e.Status)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": e.Type, "code": e.Type, "message": e.Message, "param": nil}})
		return
	}
	id := fmt.Sprintf("resp_e2e_%d", r.Seq)
	type obj = map[string]any
	ns := responsesNamespaces(r)
	var output []obj
	var args []string
	if reply.Text != "" {
		output = append(output, obj{
			"type": "message", "id": fmt.Sprintf("msg_e2e_%d", r.Seq), "status": "completed", "role": "assistant",
			"content": []obj{{"type": "output_text", "text": reply.Text, "annotations": []any{}}},
		})
		args = append(args, "")
	}
	for i, u := range reply.ToolUses {
		in, err := u.inputJSON()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if u.Name == ToolSearch {
			output = append(output, obj{"type": "tool_search_call", "id": fmt.Sprintf("ts_e2e_%d_%d", r.Seq, i+1), "status": "completed",
				"call_id": u.ID, "execution": "client", "arguments": in})
			args = append(args, "")
			continue
		}
		item := obj{"type": "function_call", "id": fmt.Sprintf("fc_e2e_%d_%d", r.Seq, i+1), "status": "completed",
			"call_id": u.ID, "name": u.Name, "arguments": string(in)}
		if n, ok := ns[u.Name]; ok {
			item["namespace"], item["name"] = n[0], n[1]
		}
		output = append(output, item)
		args = append(args, string(in))
	}
	if output == nil {
		output = []obj{}
	}
	resp := func(status string, out []obj, usage any) obj {
		return obj{"id": id, "object": "response", "created_at": 1700000000, "status": status, "model": r.Model,
			"output": out, "usage": usage, "error": nil, "incomplete_details": nil}
	}
	usage := responsesUsage(p.usage(r, reply))
	if !r.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp("completed", output, usage))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	seq := 0
	ev := func(name string, data obj) {
		data["type"] = name
		data["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	ev("response.created", obj{"response": resp("in_progress", []obj{}, nil)})
	ev("response.in_progress", obj{"response": resp("in_progress", []obj{}, nil)})
	for i, item := range output {
		itemID := item["id"]
		started := obj{}
		for k, v := range item {
			started[k] = v
		}
		started["status"] = "in_progress"
		switch item["type"] {
		case "message":
			started["content"] = []obj{}
			ev("response.output_item.added", obj{"output_index": i, "item": started})
			part := obj{"type": "output_text", "text": "", "annotations": []any{}}
			ev("response.content_part.added", obj{"output_index": i, "item_id": itemID, "content_index": 0, "part": part})
			for _, chunk := range split(reply.Text) {
				ev("response.output_text.delta", obj{"output_index": i, "item_id": itemID, "content_index": 0, "delta": chunk})
			}
			ev("response.output_text.done", obj{"output_index": i, "item_id": itemID, "content_index": 0, "text": reply.Text})
			ev("response.content_part.done", obj{"output_index": i, "item_id": itemID, "content_index": 0,
				"part": obj{"type": "output_text", "text": reply.Text, "annotations": []any{}}})
		case "tool_search_call":
			ev("response.output_item.added", obj{"output_index": i, "item": started})
		case "function_call":
			started["arguments"] = ""
			ev("response.output_item.added", obj{"output_index": i, "item": started})
			for _, chunk := range split(args[i]) {
				ev("response.function_call_arguments.delta", obj{"output_index": i, "item_id": itemID, "delta": chunk})
			}
			ev("response.function_call_arguments.done", obj{"output_index": i, "item_id": itemID, "arguments": args[i]})
		}
		ev("response.output_item.done", obj{"output_index": i, "item": item})
	}
	ev("response.completed", obj{"response": resp("completed", output, usage)})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
