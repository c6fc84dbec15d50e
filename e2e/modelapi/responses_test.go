package modelapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// A request as Codex CLI sends it: developer and user messages, a
// tool_search call and its output (a namespace of MCP tools), a call of
// one of them and its output; tools offered, one of them a namespace.
const responsesRequest = `{
  "model": "m", "stream": %s, "instructions": "Be brief.",
  "tools": [{"type": "function", "name": "exec_command", "description": "run", "parameters": {"type": "object"}},
            {"type": "tool_search", "execution": "client", "description": "search", "parameters": {"type": "object"}},
            {"type": "namespace", "name": "mcp__other", "description": "x", "tools": [{"type": "function", "name": "Ping", "parameters": {}}]}],
  "input": [
    {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "dev note"}]},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "plan it"}]},
    {"type": "tool_search_call", "call_id": "s1", "execution": "client", "arguments": {"query": "tasks", "limit": 8}},
    {"type": "tool_search_output", "call_id": "s1", "execution": "client", "status": "completed",
     "tools": [{"type": "namespace", "name": "mcp__tasks", "description": "tasks", "tools": [{"type": "function", "name": "TaskList", "description": "list", "parameters": {"type": "object"}}]}]},
    {"type": "function_call", "call_id": "c1", "name": "TaskList", "namespace": "mcp__tasks", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c1", "output": "Wall time: 0.01 seconds\nOutput:\n{\"tasks\":[]}"},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go on"}]}
  ]}`

func postResponses(t *testing.T, s *modelapi.Server, stream bool) *http.Response {
	t.Helper()
	body := strings.Replace(responsesRequest, "%s", map[bool]string{true: "true", false: "false"}[stream], 1)
	resp, err := http.Post(s.URL+"/v1/responses", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return resp
}

func TestResponsesDecode(t *testing.T) {
	s := modelapi.New(t, modelapi.Config{Respond: modelapi.NewScript(modelapi.Text("ok")).Respond})
	postResponses(t, s, false)
	r := s.LastMain(t)
	assert.Equal(t, "responses", r.Provider)
	assert.Equal(t, "Be brief.", r.System)
	assert.Equal(t, []string{"exec_command", "tool_search", "mcp__other__Ping", "mcp__tasks__TaskList"}, r.ToolNames(),
		"namespaced tools are joined to their namespace; tools found by tool_search are offered")
	require.Len(t, r.Messages, 6) // developer, user, assistant (search), user (found), assistant (call), user (output, "go on")
	assert.Equal(t, "developer", r.Messages[0].Role)
	assert.Equal(t, "plan it", r.FirstUserText())
	uses := r.ToolUses("")
	require.Len(t, uses, 2)
	assert.Equal(t, modelapi.ToolSearch, uses[0].Name)
	assert.JSONEq(t, `{"query":"tasks","limit":8}`, string(uses[0].Input))
	assert.Equal(t, "mcp__tasks__TaskList", uses[1].Name)
	res := r.ToolResults("mcp__tasks__TaskList")
	require.Len(t, res, 1)
	assert.Contains(t, res[0].Text, `{"tasks":[]}`)
	// The last user message: the TaskList output and "go on".
	assert.Len(t, r.PendingToolResults(), 1)
	assert.Contains(t, r.LastUserText(), "go on")
}

func TestResponsesStream(t *testing.T) {
	s := modelapi.New(t, modelapi.Config{Respond: modelapi.NewScript(modelapi.Reply{
		Text: "Listing.",
		ToolUses: []modelapi.ToolUse{
			{Name: "mcp__tasks__TaskList", Input: map[string]any{}},
			{Name: modelapi.ToolSearch, Input: map[string]any{"query": "x"}},
		},
		Usage: &modelapi.Usage{InputTokens: 150000, OutputTokens: 7},
	}).Respond})
	resp := postResponses(t, s, true)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	names, data := sse(t, resp.Body)
	assert.Equal(t, "response.created", names[0])
	assert.Equal(t, "response.completed", names[len(names)-1])
	var text, args string
	var done []map[string]any
	for i, n := range names {
		switch n {
		case "response.output_text.delta":
			text += data[i]["delta"].(string)
		case "response.function_call_arguments.delta":
			args += data[i]["delta"].(string)
		case "response.output_item.done":
			done = append(done, data[i]["item"].(map[string]any))
		}
	}
	assert.Equal(t, "Listing.", text)
	assert.JSONEq(t, `{}`, args)
	require.Len(t, done, 3)
	assert.Equal(t, "message", done[0]["type"])
	assert.Equal(t, "function_call", done[1]["type"])
	assert.Equal(t, "TaskList", done[1]["name"], "a namespaced tool is called by its own name")
	assert.Equal(t, "mcp__tasks", done[1]["namespace"])
	assert.Equal(t, "toolu_e2e_1_1", done[1]["call_id"])
	assert.Equal(t, "tool_search_call", done[2]["type"])
	assert.Equal(t, map[string]any{"query": "x"}, done[2]["arguments"])
	usage := data[len(data)-1]["response"].(map[string]any)["usage"].(map[string]any)
	assert.EqualValues(t, 150000, usage["input_tokens"])
	assert.EqualValues(t, 7, usage["output_tokens"])
}

func TestResponsesNonStreamingAndError(t *testing.T) {
	s := modelapi.New(t, modelapi.Config{Respond: modelapi.NewScript(
		modelapi.Call("exec_command", `{"cmd":"ls"}`),
		modelapi.Reply{Error: &modelapi.APIError{Status: 429, Type: "rate_limit_exceeded", Message: "slow down"}},
	).Respond})
	var out struct {
		Status string `json:"status"`
		Output []struct {
			Type      string `json:"type"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"output"`
	}
	require.NoError(t, json.NewDecoder(postResponses(t, s, false).Body).Decode(&out))
	assert.Equal(t, "completed", out.Status)
	require.Len(t, out.Output, 1)
	assert.Equal(t, "exec_command", out.Output[0].Name)
	assert.JSONEq(t, `{"cmd":"ls"}`, out.Output[0].Arguments)

	body := strings.Replace(responsesRequest, "%s", "true", 1)
	resp, err := http.Post(s.URL+"/v1/responses", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, 429, resp.StatusCode)
}
