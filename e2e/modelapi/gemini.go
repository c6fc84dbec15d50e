package modelapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// gemini is the Gemini API (generativelanguage, v1beta) as Gemini CLI's
// @google/genai client speaks it with an API key: POST
// /v1beta/models/M:streamGenerateContent?alt=sse for agent turns (SSE, one
// GenerateContentResponse a chunk), :generateContent for side requests
// (compression summaries, checks), :countTokens. A request's contents are
// user and model messages of parts: text, functionCall ({name, args, id?})
// and functionResponse ({id, name, response: {output} or {error}}).
type gemini struct{}

type geminiRequest struct {
	Contents []struct {
		Role  string            `json:"role"`
		Parts []json.RawMessage `json:"parts"`
	} `json:"contents"`
	SystemInstruction *struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"systemInstruction"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Description          string          `json:"description"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		MaxOutputTokens int `json:"maxOutputTokens"`
	} `json:"generationConfig"`
}

type geminiPart struct {
	Text         *string `json:"text"`
	Thought      bool    `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

// geminiModelOp splits the last path segment "M:op".
func geminiModelOp(path string) (model, op string) {
	seg := path[strings.LastIndexByte(path, '/')+1:]
	model, op, _ = strings.Cut(seg, ":")
	return model, op
}

func (gemini) decode(r *Request) error {
	var in geminiRequest
	if err := json.Unmarshal(r.Raw, &in); err != nil {
		return err
	}
	var op string
	r.Model, op = geminiModelOp(r.Path)
	r.Stream = op == "streamGenerateContent"
	r.MaxTokens = in.GenerationConfig.MaxOutputTokens
	if in.SystemInstruction != nil {
		var sys []string
		for _, p := range in.SystemInstruction.Parts {
			sys = append(sys, p.Text)
		}
		r.System = strings.Join(sys, "\n")
	}
	for i, c := range in.Contents {
		role := "user"
		if c.Role == "model" {
			role = "assistant"
		}
		var blocks []Block
		for _, raw := range c.Parts {
			var p geminiPart
			if err := json.Unmarshal(raw, &p); err != nil {
				return fmt.Errorf("content %d: %w", i, err)
			}
			switch {
			case p.FunctionCall != nil:
				args := p.FunctionCall.Args
				if len(args) == 0 {
					args = json.RawMessage(`{}`)
				}
				blocks = append(blocks, Block{Type: BlockToolUse, ToolUseID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Input: args, Raw: raw})
			case p.FunctionResponse != nil:
				text, isErr := geminiResponseText(p.FunctionResponse.Response)
				blocks = append(blocks, Block{Type: BlockToolResult, ToolUseID: p.FunctionResponse.ID, Name: p.FunctionResponse.Name, Text: text, IsError: isErr, Raw: raw})
			case p.Text != nil && !p.Thought:
				blocks = append(blocks, Block{Type: BlockText, Text: *p.Text, Raw: raw})
			default:
				blocks = append(blocks, Block{Type: BlockOther, Raw: raw})
			}
		}
		r.Messages = append(r.Messages, Message{Role: role, Blocks: blocks})
	}
	for _, t := range in.Tools {
		for _, f := range t.FunctionDeclarations {
			schema := f.ParametersJSONSchema
			if len(schema) == 0 {
				schema = f.Parameters
			}
			r.Tools = append(r.Tools, Tool{Name: f.Name, Description: f.Description, InputSchema: schema})
		}
	}
	return nil
}

// geminiResponseText is what a functionResponse tells the model: its
// output (Gemini CLI's {output: text}), or its error, else the response
// as JSON.
func geminiResponseText(raw json.RawMessage) (string, bool) {
	var resp map[string]json.RawMessage
	if json.Unmarshal(raw, &resp) != nil {
		return string(raw), false
	}
	for _, k := range []string{"output", "error"} {
		var s string
		if v, ok := resp[k]; ok && json.Unmarshal(v, &s) == nil && len(resp) == 1 {
			return s, k == "error"
		}
	}
	_, isErr := resp["error"]
	return string(raw), isErr
}

// geminiFinish is the candidate's finishReason.
func geminiFinish(reply Reply) string {
	switch stopReason(reply) {
	case "max_tokens":
		return "MAX_TOKENS"
	default:
		return "STOP" // tool calls finish with STOP too
	}
}

func (gemini) write(w http.ResponseWriter, r *Request, reply Reply) {
	type obj = map[string]any
	if e := reply.Error; e != nil {
		status := e.Type
		if status == "" {
			status = http.StatusText(e.Status)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(e.Status)
		json.NewEncoder(w).Encode(obj{"error": obj{"code": e.Status, "message": e.Message, "status": status}})
		return
	}
	u := Usage{InputTokens: estimateTokens(r.Raw), OutputTokens: 10 + len(reply.Text)/4}
	if reply.Usage != nil {
		u = *reply.Usage
	}
	prompt := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	usage := obj{"promptTokenCount": prompt, "candidatesTokenCount": u.OutputTokens, "totalTokenCount": prompt + u.OutputTokens}
	if u.CacheReadInputTokens > 0 {
		usage["cachedContentTokenCount"] = u.CacheReadInputTokens
	}
	var calls []obj
	for _, tu := range reply.ToolUses {
		in, err := tu.inputJSON()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		// The Gemini API gives no call ids; Gemini CLI makes its own.
		calls = append(calls, obj{"functionCall": obj{"name": tu.Name, "args": in}})
	}
	response := func(parts []obj, final bool) obj {
		cand := obj{"index": 0, "content": obj{"role": "model", "parts": parts}}
		out := obj{"candidates": []obj{cand}, "modelVersion": r.Model, "responseId": fmt.Sprintf("e2e-%d", r.Seq)}
		if final {
			cand["finishReason"] = geminiFinish(reply)
			out["usageMetadata"] = usage
		}
		return out
	}
	if !r.Stream {
		var parts []obj
		if reply.Text != "" {
			parts = append(parts, obj{"text": reply.Text})
		}
		parts = append(parts, calls...)
		if len(parts) == 0 {
			parts = []obj{{"text": ""}}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(response(parts, true))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	chunk := func(v obj) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
	}
	var texts []string
	if reply.Text != "" {
		texts = split(reply.Text)
	}
	for i, t := range texts {
		chunk(response([]obj{{"text": t}}, i == len(texts)-1 && len(calls) == 0))
	}
	if len(calls) > 0 {
		chunk(response(calls, true))
	} else if len(texts) == 0 {
		chunk(response([]obj{{"text": ""}}, true))
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// geminiCountTokens answers :countTokens.
func geminiCountTokens(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"totalTokens":%d}`, estimateTokens(body))
}

// geminiModels routes POST /v1beta/models/M:op: countTokens is answered
// with an estimate (and noted as another request), every other op is a
// model turn.
func (s *Server) geminiModels() http.HandlerFunc {
	turn := s.turn("gemini", gemini{})
	return func(w http.ResponseWriter, hr *http.Request) {
		if _, op := geminiModelOp(hr.URL.Path); op == "countTokens" {
			body, _ := io.ReadAll(hr.Body)
			s.noteOther(hr)
			geminiCountTokens(w, body)
			return
		}
		turn(w, hr)
	}
}
