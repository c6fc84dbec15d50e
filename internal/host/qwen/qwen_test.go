package qwen_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/qwen"
)

func TestCalls(t *testing.T) {
	// Ensures the Task calls of a chat record are read in order, direct
	// and through the tool_call bridge, those of the server named only,
	// each with its outcome; a call without one is left out.
	calls, err := qwen.Calls(context.Background(), "testdata/chat.jsonl", "tasks")
	require.NoError(t, err)
	require.Len(t, calls, 5)
	assert.Equal(t, "TaskCreate", calls[0].Name)
	assert.Equal(t, "TaskCreate", calls[1].Name)
	assert.JSONEq(t, `{"subject":"Test the parser"}`, string(calls[1].Arguments.(json.RawMessage)), "the bridge's arguments")
	assert.Equal(t, "qwen-c2", calls[1].CallID)
	assert.Equal(t, "TaskUpdate", calls[2].Name)
	assert.True(t, calls[2].IsError)
	assert.False(t, calls[3].IsError, "a result with no status (a subagent's) and no error succeeded")
	assert.True(t, calls[4].IsError, "a result with no status but an error failed")
}

func TestServes(t *testing.T) {
	// Ensures the bridge is bound to QWEN_CODE_SESSION_ID under Qwen Code,
	// and Qwen Code is not recognised without it.
	env := func(vars map[string]string) host.Env {
		return host.Env{Getenv: func(k string) string { return vars[k] }, Parent: 4242, RuntimeDir: t.TempDir()}
	}
	s, ok := qwen.Host{}.Serves(env(map[string]string{"QWEN_CODE_SESSION_ID": "S1"}))
	require.True(t, ok)
	assert.Equal(t, "S1", s.SessionID)
	assert.NotNil(t, s.Bound, "/clear is followed through the hook's binding")
	_, ok = qwen.Host{}.Serves(env(map[string]string{"GEMINI_CLI": "1"}))
	assert.False(t, ok)
	assert.True(t, qwen.Host{}.IsClient("qwen-cli-mcp-client-tasks"))
}
