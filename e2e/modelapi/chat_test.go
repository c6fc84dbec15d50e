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

// A request as OpenCode sends it to an OpenAI-compatible provider: a system
// message, user content as a string and as parts, an assistant turn with
// two tool calls and their two "tool" messages, tools offered.
const chatRequest = `{
  "model": "scripted", "max_tokens": 4096, "stream": %s, "stream_options": {"include_usage": true},
  "tools": [{"type": "function", "function": {"name": "TaskList", "description": "list", "parameters": {"type": "object", "properties": {}}}}],
  "messages": [
    {"role": "system", "content": "You are a test."},
    {"role": "user", "content": "plan it"},
    {"role": "assistant", "content": "Listing.", "tool_calls": [
      {"id": "c1", "type": "function", "function": {"name": "TaskList", "arguments": "{}"}},
      {"id": "c2", "type": "function", "function": {"name": "TaskGet", "arguments": "{\"taskid\":1}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "#1 [pending] Write it"},
    {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "#1 Write it"}]},
    {"role": "user", "content": [{"type": "text", "text": "go on"}, {"type": "image_url", "image_url": {"url": "data:"}}]}
  ]}`

func postChat(t *testing.T, s *modelapi.Server, stream bool) *http.Response {
	t.Helper()
	body := strings.Replace(chatRequest, "%s", map[bool]string{true: "true", false: "false"}[stream], 1)
	resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestChatDecode(t *testing.T) {
	// The view: system messages make System; tool calls are tool_use blocks
	// after the assistant's text; consecutive "tool" messages make one user
	// message of tool results, named by the calls they answer.
	s := modelapi.New(t, modelapi.Config{Respond: modelapi.NewScript(modelapi.Text("ok")).Respond})
	resp := postChat(t, s, false)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	r := s.LastMain(t)
	assert.Equal(t, "chat", r.Provider)
	assert.Equal(t, "scripted", r.Model)
	assert.Equal(t, 4096, r.MaxTokens)
	assert.Equal(t, "You are a test.", r.System)
	assert.Equal(t, []string{"TaskList"}, r.ToolNames())
	assert.JSONEq(t, `{"type": "object", "properties": {}}`, string(r.Tools[0].InputSchema))
	require.Len(t, r.Messages, 4)
	assert.Equal(t, "plan it", r.FirstUserText())
	assert.Equal(t, "assistant", r.Messages[1].Role)
	require.Len(t, r.Messages[1].Blocks, 3)
	assert.Equal(t, "Listing.", r.Messages[1].Blocks[0].Text)
	uses := r.ToolUses("")
	require.Len(t, uses, 2)
	assert.Equal(t, "c2", uses[1].ToolUseID)
	assert.JSONEq(t, `{"taskid":1}`, string(uses[1].Input))
	assert.Equal(t, "user", r.Messages[2].Role)
	res := r.ToolResults("")
	require.Len(t, res, 2)
	assert.Equal(t, "TaskList", res[0].Name)
	assert.Equal(t, "#1 [pending] Write it", res[0].Text)
	assert.Equal(t, "TaskGet", res[1].Name)
	assert.Equal(t, "#1 Write it", res[1].Text)
	assert.Equal(t, "go on", r.LastUserText())
	assert.Equal(t, modelapi.BlockOther, r.Messages[3].Blocks[1].Type)
	assert.Empty(t, r.PendingToolResults(), "the last user message holds no tool results")
}

// chatSSE reads a chat completions stream into its chunks; it requires the
// final "data: [DONE]".
func chatSSE(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	done := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		require.False(t, done, "a chunk after [DONE]")
		if line == "[DONE]" {
			done = true
			continue
		}
		var c map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &c))
		out = append(out, c)
	}
	require.True(t, done, "no [DONE]")
	return out
}

func TestChatStream(t *testing.T) {
	// Text and tool calls come as deltas (arguments split), then the
	// finish reason, then a usage chunk without choices.
	s := modelapi.New(t, modelapi.Config{Respond: modelapi.NewScript(modelapi.Reply{
		Text: "Listing ✓.",
		ToolUses: []modelapi.ToolUse{
			{Name: "TaskCreate", Input: map[string]any{"subject": "Ship ✓"}},
			{ID: "mine", Name: "TaskList"},
		},
		Usage: &modelapi.Usage{InputTokens: 60000, OutputTokens: 7, CacheReadInputTokens: 1000},
	}).Respond})
	resp := postChat(t, s, true)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	chunks := chatSSE(t, resp.Body)
	var text string
	type call struct{ id, name, args string }
	calls := map[float64]*call{}
	var finish any
	var usage map[string]any
	for _, c := range chunks {
		assert.Equal(t, "chat.completion.chunk", c["object"])
		if u, ok := c["usage"].(map[string]any); ok {
			usage = u
		}
		choices := c["choices"].([]any)
		if len(choices) == 0 {
			continue
		}
		ch := choices[0].(map[string]any)
		if ch["finish_reason"] != nil {
			finish = ch["finish_reason"]
		}
		delta := ch["delta"].(map[string]any)
		if s, ok := delta["content"].(string); ok {
			text += s
		}
		tcs, _ := delta["tool_calls"].([]any)
		for _, x := range tcs {
			tc := x.(map[string]any)
			i := tc["index"].(float64)
			if calls[i] == nil {
				calls[i] = &call{}
			}
			if id, ok := tc["id"].(string); ok {
				calls[i].id = id
			}
			f := tc["function"].(map[string]any)
			if n, ok := f["name"].(string); ok {
				calls[i].name = n
			}
			calls[i].args += f["arguments"].(string)
		}
	}
	assert.Equal(t, "Listing ✓.", text)
	require.Len(t, calls, 2)
	assert.Equal(t, "toolu_e2e_1_1", calls[0].id)
	assert.Equal(t, "TaskCreate", calls[0].name)
	assert.JSONEq(t, `{"subject":"Ship ✓"}`, calls[0].args)
	assert.Equal(t, "mine", calls[1].id)
	assert.JSONEq(t, `{}`, calls[1].args)
	assert.Equal(t, "tool_calls", finish)
	require.NotNil(t, usage, "no usage chunk")
	assert.EqualValues(t, 61000, usage["prompt_tokens"], "prompt tokens count the cached ones")
	assert.EqualValues(t, 7, usage["completion_tokens"])
	assert.EqualValues(t, 1000, usage["prompt_tokens_details"].(map[string]any)["cached_tokens"])
	last := chunks[len(chunks)-1]
	assert.Empty(t, last["choices"], "the usage chunk comes last, without choices")
}

func TestChatNonStreaming(t *testing.T) {
	s := modelapi.New(t, modelapi.Config{Respond: modelapi.NewScript(modelapi.Call("X", `{"a":1}`), modelapi.Text("Done.")).Respond})
	var msg struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Role      string  `json:"role"`
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	resp := postChat(t, s, false)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&msg))
	assert.Equal(t, "chat.completion", msg.Object)
	require.Len(t, msg.Choices, 1)
	c := msg.Choices[0]
	assert.Nil(t, c.Message.Content)
	require.Len(t, c.Message.ToolCalls, 1)
	assert.Equal(t, "toolu_e2e_1_1", c.Message.ToolCalls[0].ID)
	assert.Equal(t, "X", c.Message.ToolCalls[0].Function.Name)
	assert.JSONEq(t, `{"a":1}`, c.Message.ToolCalls[0].Function.Arguments)
	assert.Equal(t, "tool_calls", c.FinishReason)
	assert.Positive(t, msg.Usage.PromptTokens)

	resp = postChat(t, s, false)
	msg.Choices = nil
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&msg))
	require.NotNil(t, msg.Choices[0].Message.Content)
	assert.Equal(t, "Done.", *msg.Choices[0].Message.Content)
	assert.Equal(t, "stop", msg.Choices[0].FinishReason)
}

func TestChatError(t *testing.T) {
	s := modelapi.New(t, modelapi.Config{Respond: modelapi.NewScript(modelapi.Reply{
		Error: &modelapi.APIError{Status: 429, Type: "rate_limit_error", Message: "slow down"}}).Respond})
	resp := postChat(t, s, true)
	assert.Equal(t, 429, resp.StatusCode)
	b, _ := io.ReadAll(resp.Body)
	assert.JSONEq(t, `{"error":{"message":"slow down","type":"rate_limit_error","code":null}}`, string(b))
}
