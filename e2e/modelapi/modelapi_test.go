package modelapi_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// A request as Claude Code sends it: a system prompt in blocks, a tool
// call and its result (content in blocks), tools offered.
const request = `{
  "model": "m", "max_tokens": 100, "stream": %s,
  "system": [{"type": "text", "text": "You are a test."}],
  "tools": [{"name": "mcp__tasks__TaskList", "description": "list", "input_schema": {"type": "object"}}],
  "messages": [
    {"role": "user", "content": "plan it"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "mcp__tasks__TaskList", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "#1 [pending] Write it"}]},
                                 {"type": "text", "text": "go on"}]}
  ]}`

func post(t *testing.T, s *modelapi.Server, stream bool) *http.Response {
	t.Helper()
	body := strings.Replace(request, "%s", map[bool]string{true: "true", false: "false"}[stream], 1)
	resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return resp
}

// sse reads a stream into its events' data, by event name in order.
func sse(t *testing.T, r io.Reader) (names []string, data []map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			names = append(names, strings.TrimPrefix(line, "event: "))
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d))
			data = append(data, d)
		}
	}
	require.Len(t, data, len(names))
	return names, data
}

func TestDecode(t *testing.T) {
	// The decoded view: system text, messages and blocks, tool results named
	// by the call they answer, tools.
	s := modelapi.New(t, modelapi.Config{Respond: modelapi.NewScript(modelapi.Text("ok")).Respond})
	post(t, s, false)
	r := s.LastMain(t)
	assert.Equal(t, "You are a test.", r.System)
	assert.Equal(t, []string{"mcp__tasks__TaskList"}, r.ToolNames())
	require.Len(t, r.Messages, 3)
	assert.Equal(t, "plan it", r.FirstUserText())
	assert.Equal(t, "#1 [pending] Write it\ngo on", r.LastUserText())
	res := r.ToolResults("mcp__tasks__TaskList")
	require.Len(t, res, 1)
	assert.Equal(t, "#1 [pending] Write it", res[0].Text)
	assert.Len(t, r.PendingToolResults(), 1)
	assert.Len(t, r.ToolUses(""), 1)
	assert.Contains(t, r.AllText(), "You are a test.")
	assert.NotContains(t, r.ConversationText(), "You are a test.")
	assert.Equal(t, 1, strings.Count(r.AllText(), "#1 [pending] Write it"))
}

func TestStream(t *testing.T) {
	// A streamed reply of text and a tool call comes in the Messages API's
	// event order, the tool input split across deltas.
	s := modelapi.New(t, modelapi.Config{Respond: modelapi.NewScript(modelapi.Reply{
		Text:     "Listing.",
		ToolUses: []modelapi.ToolUse{{Name: "mcp__tasks__TaskCreate", Input: map[string]any{"subject": "Ship ✓"}}},
		Usage:    &modelapi.Usage{InputTokens: 150000, OutputTokens: 7},
	}).Respond})
	resp := post(t, s, true)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	names, data := sse(t, resp.Body)
	assert.Equal(t, []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}, names)
	usage := data[0]["message"].(map[string]any)["usage"].(map[string]any)
	assert.EqualValues(t, 150000, usage["input_tokens"])
	var text, input string
	for _, d := range data {
		if delta, ok := d["delta"].(map[string]any); ok {
			switch delta["type"] {
			case "text_delta":
				text += delta["text"].(string)
			case "input_json_delta":
				input += delta["partial_json"].(string)
			}
		}
	}
	assert.Equal(t, "Listing.", text)
	assert.JSONEq(t, `{"subject":"Ship ✓"}`, input)
	assert.Equal(t, "mcp__tasks__TaskCreate", data[6]["content_block"].(map[string]any)["name"])
	assert.Equal(t, "tool_use", data[10]["delta"].(map[string]any)["stop_reason"])
	assert.EqualValues(t, 7, data[10]["usage"].(map[string]any)["output_tokens"])
}

func TestNonStreaming(t *testing.T) {
	s := modelapi.New(t, modelapi.Config{Respond: modelapi.NewScript(modelapi.Call("X", `{"a":1}`)).Respond})
	resp := post(t, s, false)
	var msg struct {
		Content []struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&msg))
	require.Len(t, msg.Content, 1)
	assert.Equal(t, "tool_use", msg.Content[0].Type)
	assert.Equal(t, "toolu_e2e_1_1", msg.Content[0].ID)
	assert.JSONEq(t, `{"a":1}`, string(msg.Content[0].Input))
	assert.Equal(t, "tool_use", msg.StopReason)
}

func TestSideRequests(t *testing.T) {
	// Requests the classifier marks as side requests get the default and
	// do not use up the script; unknown paths are answered and listed.
	script := modelapi.NewScript(modelapi.Text("main"))
	s := modelapi.New(t, modelapi.Config{
		Respond: script.Respond,
		Classify: func(r *modelapi.Request) string {
			return map[bool]string{true: modelapi.KindTitle, false: modelapi.KindMain}[r.Model == "small"]
		},
		Default: func(*modelapi.Request) modelapi.Reply { return modelapi.Text(`{"title":"t"}`) },
	})
	side, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"small","messages":[{"role":"user","content":"title?"}]}`))
	require.NoError(t, err)
	side.Body.Close()
	post(t, s, false)
	assert.True(t, script.Done())
	require.Len(t, s.Of(modelapi.KindTitle), 1)
	assert.Equal(t, `{"title":"t"}`, s.Of(modelapi.KindTitle)[0].Reply.Text)
	assert.Equal(t, "main", s.LastMain(t).Reply.Text)

	ct, err := http.Post(s.URL+"/v1/messages/count_tokens", "application/json", strings.NewReader(`{"messages":[]}`))
	require.NoError(t, err)
	ct.Body.Close()
	other, err := http.Get(s.URL + "/api/whatever")
	require.NoError(t, err)
	other.Body.Close()
	assert.Equal(t, []string{"POST /v1/messages/count_tokens", "GET /api/whatever"}, s.Others())
}

func TestErrorReply(t *testing.T) {
	s := modelapi.New(t, modelapi.Config{Respond: modelapi.NewScript(modelapi.Reply{
		Error: &modelapi.APIError{Status: 529, Type: "overloaded_error", Message: "busy"}}).Respond})
	body := strings.Replace(request, "%s", "true", 1)
	resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, 529, resp.StatusCode)
	b, _ := io.ReadAll(resp.Body)
	assert.JSONEq(t, `{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`, string(b))
}

func TestSteps(t *testing.T) {
	// Steps answer by predicate; a Once step answers one request only.
	respond := modelapi.Steps(
		&modelapi.Step{Match: modelapi.AnswersTool("mcp__tasks__TaskList"), Reply: func(*modelapi.Request) modelapi.Reply { return modelapi.Text("after list") }, Once: true},
		&modelapi.Step{Reply: func(*modelapi.Request) modelapi.Reply { return modelapi.Text("fallback") }},
	)
	s := modelapi.New(t, modelapi.Config{Respond: respond})
	post(t, s, false)
	post(t, s, false)
	m := s.Main()
	require.Len(t, m, 2)
	assert.Equal(t, "after list", m[0].Reply.Text)
	assert.Equal(t, "fallback", m[1].Reply.Text)
}
