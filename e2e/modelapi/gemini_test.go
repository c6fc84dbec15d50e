package modelapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// A request as Gemini CLI sends it: a system instruction, the tools as
// function declarations, a model turn with a function call and its
// response (Gemini CLI's {output}) in the next user content.
const geminiRequest = `{
  "contents": [
    {"role": "user", "parts": [{"text": "plan it"}]},
    {"role": "model", "parts": [{"text": "thinking", "thought": true}, {"functionCall": {"id": "c1", "name": "mcp_tasks_TaskCreate", "args": {"subject": "a", "wait_for_previous": true}}}]},
    {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "mcp_tasks_TaskCreate", "response": {"output": "Created #1"}}}]}
  ],
  "systemInstruction": {"role": "user", "parts": [{"text": "You are a test."}]},
  "tools": [{"functionDeclarations": [{"name": "mcp_tasks_TaskCreate", "description": "create", "parametersJsonSchema": {"type": "object"}}]}],
  "generationConfig": {"maxOutputTokens": 100}
}`

func TestGemini(t *testing.T) {
	s := modelapi.New(t, modelapi.Config{Respond: modelapi.NewScript(
		modelapi.Reply{Text: "Listing.", ToolUses: []modelapi.ToolUse{{Name: "mcp_tasks_TaskList", Input: map[string]any{"wait_for_previous": true}}}},
		modelapi.Text("done"),
	).Respond})
	post := func(op string) string {
		resp, err := http.Post(s.URL+"/v1beta/models/gemini-2.5-pro:"+op, "application/json", strings.NewReader(geminiRequest))
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(b)
	}
	sse := post("streamGenerateContent?alt=sse")
	r := s.LastMain(t)
	assert.Equal(t, "gemini", r.Provider)
	assert.Equal(t, "gemini-2.5-pro", r.Model)
	assert.True(t, r.Stream)
	assert.Equal(t, "You are a test.", r.System)
	assert.Equal(t, []string{"mcp_tasks_TaskCreate"}, r.ToolNames())
	require.Len(t, r.Messages, 3)
	uses := r.ToolUses("mcp_tasks_TaskCreate")
	require.Len(t, uses, 1)
	assert.JSONEq(t, `{"subject": "a", "wait_for_previous": true}`, string(uses[0].Input))
	res := r.PendingToolResults()
	require.Len(t, res, 1)
	assert.Equal(t, "Created #1", res[0].Text)
	assert.Equal(t, "mcp_tasks_TaskCreate", res[0].Name)
	assert.Contains(t, sse, `data: {`)
	assert.Contains(t, sse, `"functionCall":{"args":{"wait_for_previous":true},"name":"mcp_tasks_TaskList"}`)
	assert.Contains(t, sse, `"finishReason":"STOP"`)

	var out struct {
		Candidates []struct {
			Content struct {
				Parts []struct{ Text string } `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
		UsageMetadata struct{ PromptTokenCount int } `json:"usageMetadata"`
	}
	require.NoError(t, json.Unmarshal([]byte(post("generateContent")), &out))
	assert.Equal(t, "done", out.Candidates[0].Content.Parts[0].Text)
	assert.Positive(t, out.UsageMetadata.PromptTokenCount)
	assert.False(t, s.LastMain(t).Stream)

	resp, err := http.Post(s.URL+"/v1beta/models/gemini-2.5-pro:countTokens", "application/json", strings.NewReader(geminiRequest))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Len(t, s.Requests(), 2, "countTokens is no model turn")
}
