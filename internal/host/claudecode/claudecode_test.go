package claudecode_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/binding"
	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/claudecode"
	"github.com/tasksessiond/tasksessiond/internal/mcpbridge"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

var ctx = context.Background()

// transcript lines: a TaskCreate and its result, and the model's TaskList
// call (tool_use id) that reaches the bridge.
func created(id, subject string) string {
	return `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"` + id + `","name":"mcp__tasks__TaskCreate","input":{"subject":"` + subject + `"}}]}}` + "\n" +
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"ok"}]}}` + "\n"
}

func listing(id string) string {
	return `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"` + id + `","name":"mcp__tasks__TaskList","input":{}}]}}` + "\n"
}

// forkBridge serves the fork "fork", bound to the transcript at path, as
// Claude Code's bridge does, and returns an MCP client of it.
func forkBridge(t *testing.T, path string) *mcp.ClientSession {
	t.Helper()
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	b, err := mcpbridge.New(mcpbridge.Config{Socket: d.Socket, SessionID: "fork", Create: true, Server: "tasks",
		Bound: func() binding.Conversation { return binding.Conversation{ID: "fork", Transcript: path} }, History: claudecode.Host{}})
	require.NoError(t, err)
	ct, st := mcp.NewInMemoryTransports()
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); b.Run(runCtx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	return cs
}

func text(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	require.Len(t, r.Content, 1)
	return r.Content[0].(*mcp.TextContent).Text
}

func TestForkRebuiltOnceItsTranscriptIsWritten(t *testing.T) {
	// Ensures a fork's first call rebuilds its list from the history
	// before that call, however late Claude Code writes it: the bridge
	// reads the transcript once it holds the call's own tool_use (named in
	// the call's _meta), not when the call comes; a call that names none
	// reads it as it is.
	var _ host.History = claudecode.Host{}
	t.Run("WrittenAfterTheCall", func(t *testing.T) {
		// Ensures the list holds what was written after the call came.
		path := filepath.Join(t.TempDir(), "fork.jsonl")
		require.NoError(t, os.WriteFile(path, []byte(created("u1", "One")), 0o600))
		cs := forkBridge(t, path)
		res := make(chan *mcp.CallToolResult, 1)
		go func() {
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "TaskList", Arguments: map[string]any{},
				Meta: mcp.Meta{"claudecode/toolUseId": "toolu_3"}})
			assert.NoError(t, err)
			res <- r
		}()
		assert.Never(t, func() bool { return len(res) > 0 }, 300*time.Millisecond, 10*time.Millisecond,
			"the call waits for its tool_use in the transcript")
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString(created("u2", "Two") + listing("toolu_3"))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		var r *mcp.CallToolResult
		select {
		case r = <-res:
		case <-time.After(10 * time.Second):
			t.Fatal("the call never returned")
		}
		require.False(t, r.IsError, text(t, r))
		assert.Contains(t, text(t, r), "#1 [pending] One")
		assert.Contains(t, text(t, r), "#2 [pending] Two", "the history written after the call came")
	})
	t.Run("NoToolUseNamed", func(t *testing.T) {
		// Ensures a call that names no tool_use is served from the
		// transcript as it is, at once.
		path := filepath.Join(t.TempDir(), "fork.jsonl")
		require.NoError(t, os.WriteFile(path, []byte(created("u1", "One")), 0o600))
		cs := forkBridge(t, path)
		start := time.Now()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "TaskList", Arguments: map[string]any{}})
		require.NoError(t, err)
		assert.Less(t, time.Since(start), 3*time.Second, "no wait for a tool_use none named")
		assert.Contains(t, text(t, r), "#1 [pending] One")
		assert.False(t, strings.Contains(text(t, r), "#2"))
	})
}
