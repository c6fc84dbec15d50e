package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

func mcpSession(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(binary, append([]string{"mcp"}, args...)...)}, nil)
	require.NoError(t, err)
	return cs
}

func text(r *mcp.CallToolResult) string {
	var s string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}

func TestMCPBridge(t *testing.T) {
	// Ensures a real MCP client session gets the four tools with the
	// daemon's schemas, can call each, sees an error result as isError, and
	// after reconnecting to the same session sees the same tasks.
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "m.db")
	sock := testutil.SocketPath(t)
	startDaemon(t, dbPath, sock)
	dc := testutil.DialSocket(t, sock)
	s, err := dc.CreateSession(ctx, client.CreateSession{SessionID: "mcp-1"})
	require.NoError(t, err)

	cs := mcpSession(t, "--socket", sock, "--session", s.ID)
	assert.Contains(t, cs.InitializeResult().Instructions, "mcp-1")
	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	want, err := dc.ListTools(ctx, "agent", "mcp")
	require.NoError(t, err)
	require.Len(t, tools.Tools, 4)
	schemas := map[string]any{}
	for _, raw := range want {
		var w struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		}
		require.NoError(t, json.Unmarshal(raw, &w))
		schemas[w.Name] = w.InputSchema
	}
	for _, tool := range tools.Tools {
		require.Contains(t, schemas, tool.Name)
		assert.Equal(t, schemas[tool.Name], tool.InputSchema, tool.Name)
	}

	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "TaskCreate", Arguments: map[string]any{"subject": "Wire up the bridge"}})
	require.NoError(t, err)
	assert.False(t, r.IsError)
	assert.Contains(t, text(r), `Created task #1 "Wire up the bridge"`)
	sc, _ := json.Marshal(r.StructuredContent)
	assert.Contains(t, string(sc), `"taskid":1`)

	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "TaskUpdate", Arguments: map[string]any{"taskid": 1, "status": "in_progress"}})
	require.NoError(t, err)
	assert.False(t, r.IsError)
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "TaskGet", Arguments: map[string]any{"taskid": 1}})
	require.NoError(t, err)
	assert.Contains(t, text(r), "#1 [inprogress] Wire up the bridge")
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "TaskGet", Arguments: map[string]any{"taskid": 42}})
	require.NoError(t, err)
	assert.True(t, r.IsError)
	assert.Contains(t, text(r), "no task has taskid 42")
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "TaskList", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.Contains(t, text(r), "#1 [inprogress] Wire up the bridge")
	require.NoError(t, cs.Close())

	// The host compacts the session; a reconnected client (same session id)
	// sees the same tasks, and the bridge follows to the successor.
	_, err = dc.Compact(ctx, client.Compact{SessionID: s.ID, NewSessionID: "mcp-2"})
	require.NoError(t, err)
	cs2 := mcpSession(t, "--socket", sock, "--session", s.ID)
	defer cs2.Close()
	r, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "TaskList", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.Contains(t, text(r), "#1 [inprogress] Wire up the bridge")
	r, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "TaskCreate", Arguments: map[string]any{"subject": "after compaction"}})
	require.NoError(t, err)
	assert.Contains(t, text(r), "Created task #2")
	got, err := dc.ResumeSession(ctx, "mcp-2")
	require.NoError(t, err)
	assert.Len(t, got.Tasks, 2, "the write went to the successor")
}

func TestMCPNewSessionAndMissingDaemon(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "m.db")
	sock := testutil.SocketPath(t)
	startDaemon(t, dbPath, sock)
	cmd := exec.Command(binary, "mcp", "--socket", sock)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdin.Close() // the client goes at once
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "serving new session")

	out, err = exec.Command(binary, "mcp", "--socket", filepath.Join(t.TempDir(), "none.sock")).CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "is the daemon running?")
	out, err = exec.Command(binary, "mcp", "--socket", sock, "--session", "ghost").CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), `session "ghost" not found`)
	assert.Contains(t, string(out), "pass --create")

	cmd = exec.Command(binary, "mcp", "--socket", sock, "--session", "fixed", "--create")
	stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	stdin.Close()
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "serving session fixed (new: created on first use)")

	// Under Claude Code, with no --session, the bridge binds its session id.
	cmd = exec.Command(binary, "mcp", "--socket", sock)
	cmd.Env = append(os.Environ(), "CLAUDE_CODE_SESSION_ID=claude-1234", "TASKSESSIOND_SESSION=")
	stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	stdin.Close()
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "serving session claude-1234 (new: created on first use)")
}

func TestMCPBridgeAcrossDaemonKill(t *testing.T) {
	// Ensures a real MCP client session outlives a SIGKILL of the daemon:
	// a call while it is down is an isError result (not a protocol error),
	// the next call after a restart succeeds on the same bridge process,
	// and no write is doubled or lost.
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "m.db")
	sock := testutil.SocketPath(t)
	d := startDaemon(t, dbPath, sock)
	cs := mcpSession(t, "--socket", sock, "--session", "kill-1", "--create", "--reconnect-wait", "300ms")
	defer cs.Close()
	for i := 1; i <= 3; i++ {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "TaskCreate", Arguments: map[string]any{"subject": fmt.Sprintf("step %d", i)}})
		require.NoError(t, err)
		require.False(t, r.IsError, text(r))
	}

	d.kill(t)
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "TaskUpdate", Arguments: map[string]any{"taskid": 1, "status": "completed"}})
	require.NoError(t, err, "a dead daemon is a tool error, not a protocol error")
	require.True(t, r.IsError)
	assert.Contains(t, text(r), "daemon cannot be reached")

	startDaemon(t, dbPath, sock)
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "TaskCreate", Arguments: map[string]any{"subject": "step 4"}})
	require.NoError(t, err)
	require.False(t, r.IsError, text(r))
	assert.Contains(t, text(r), `Created task #4 "step 4"`)
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "TaskList", Arguments: map[string]any{}})
	require.NoError(t, err)
	var list client.Structured
	b, _ := json.Marshal(r.StructuredContent)
	require.NoError(t, json.Unmarshal(b, &list))
	require.Len(t, list.Tasks, 4)
	for i, task := range list.Tasks {
		assert.Equal(t, fmt.Sprintf("step %d", i+1), task.Subject)
		assert.Equal(t, "pending", task.Status, "the update sent while down was not applied")
	}
}
