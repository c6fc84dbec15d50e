package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
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
	s, err := dc.CreateSession(ctx, wire.CreateSession{SessionID: "mcp-1"})
	require.NoError(t, err)

	cs := mcpSession(t, "--socket", sock, "--session", s.ID)
	assert.Empty(t, cs.InitializeResult().Instructions, "the tools' descriptions say it all: no text beside them in every request")
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
	assert.Contains(t, text(r), "#1 pending: Wire up the bridge")
	assert.Nil(t, r.StructuredContent, "text only: what the model reads")

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
	_, err = dc.Compact(ctx, wire.Compact{SessionID: s.ID, NewSessionID: "mcp-2"})
	require.NoError(t, err)
	cs2 := mcpSession(t, "--socket", sock, "--session", s.ID)
	defer cs2.Close()
	r, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "TaskList", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.Contains(t, text(r), "#1 [inprogress] Wire up the bridge")
	r, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "TaskCreate", Arguments: map[string]any{"subject": "after compaction"}})
	require.NoError(t, err)
	assert.Contains(t, text(r), "#2 pending:")
	got, err := dc.ResumeSession(ctx, "mcp-2")
	require.NoError(t, err)
	assert.Len(t, got.Tasks, 2, "the write went to the successor")
}

// mcpSessionEnv is mcpSession with extra environment for the bridge.
func mcpSessionEnv(t *testing.T, env []string, args ...string) (*mcp.ClientSession, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"mcp"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs, stderr
}

// lockedBuffer is a bytes.Buffer a child's output can be written to while
// the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestMCPSessionsAndMissingDaemon(t *testing.T) {
	// Ensures the bridge starts without a daemon and lists the four tools,
	// says nothing on stderr while all is well, creates its session on the
	// first call (a new one, a fixed --session with --create, or Claude
	// Code's conversation id), and turns an unknown --session into an
	// error result that says to pass --create.
	ctx := context.Background()
	sock := testutil.SocketPath(t)
	cs, stderr := mcpSessionEnv(t, nil, "--socket", sock, "--reconnect-wait", "100ms")
	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, list.Tools, 4, "the tools are built in")
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "TaskList", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.True(t, r.IsError)
	assert.Contains(t, text(r), "daemon cannot be reached")
	assert.Eventually(t, func() bool { return strings.Contains(stderr.String(), "the daemon cannot be reached") },
		5*time.Second, 10*time.Millisecond, "what is wrong is logged")

	startDaemon(t, filepath.Join(t.TempDir(), "m.db"), sock)
	dc := testutil.DialSocket(t, sock)
	quiet, stderr := mcpSessionEnv(t, []string{"CLAUDE_CODE_SESSION_ID=claude-1234", "TASKSESSIOND_SESSION="}, "--socket", sock)
	r, err = quiet.CallTool(ctx, &mcp.CallToolParams{Name: "TaskCreate", Arguments: map[string]any{"subject": "bound"}})
	require.NoError(t, err)
	require.False(t, r.IsError, text(r))
	got, err := dc.ResumeSession(ctx, "claude-1234")
	require.NoError(t, err, "under Claude Code the bridge serves the conversation's id")
	assert.Len(t, got.Tasks, 1)

	fixed, _ := mcpSessionEnv(t, nil, "--socket", sock, "--session", "fixed", "--create")
	r, err = fixed.CallTool(ctx, &mcp.CallToolParams{Name: "TaskList", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, r.IsError, text(r))
	_, err = dc.GetSession(ctx, "fixed")
	require.NoError(t, err, "created on first use")

	ghost, _ := mcpSessionEnv(t, nil, "--socket", sock, "--session", "ghost")
	r, err = ghost.CallTool(ctx, &mcp.CallToolParams{Name: "TaskList", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.True(t, r.IsError)
	assert.Contains(t, text(r), `session "ghost" not found`)
	assert.Contains(t, text(r), "--create")

	quiet.Close()
	fixed.Close()
	assert.Empty(t, stderr.String(), "nothing on stderr while nothing is wrong")
}

func TestAutostart(t *testing.T) {
	// Ensures that when no daemon answers, the bridge, the hook and the CLI
	// each start one on their socket and database, that several starting
	// at once end with exactly one daemon that all of them reach, and that
	// TASKSESSIOND_AUTOSTART=0 turns it off.
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "auto.db")
	sock := testutil.SocketPath(t)
	on := []string{"TASKSESSIOND_AUTOSTART=1", "TASKSESSIOND_DB=" + dbPath}
	t.Cleanup(func() { stopDaemonAt(t, sock) })

	// The CLI with autostart off fails as before.
	cmd := exec.Command(binary, "sessions", "--socket", sock)
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "is the daemon running?")

	// status reports on the daemon: it says none runs rather than start one.
	cmd = exec.Command(binary, "status", "--socket", sock)
	cmd.Env = append(os.Environ(), on...)
	out, err = cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "is the daemon running?")
	assert.Zero(t, countDaemons(t, sock), "status started no daemon")

	// Four at once: three CLI commands and a bridge's first call.
	var wg sync.WaitGroup
	outs := make([]string, 3)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(binary, "new", "--socket", sock, "--title", fmt.Sprintf("racer %d", i))
			cmd.Env = append(os.Environ(), on...)
			b, err := cmd.CombinedOutput()
			outs[i] = string(b)
			assert.NoError(t, err, string(b))
		}()
	}
	cs, _ := mcpSessionEnv(t, on, "--socket", sock, "--session", "auto", "--create")
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "TaskCreate", Arguments: map[string]any{"subject": "the daemon was started for me"}})
	require.NoError(t, err)
	require.False(t, r.IsError, text(r))
	wg.Wait()

	dc := testutil.DialSocket(t, sock)
	st, err := dc.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, dbPath, st.Database, "the started daemon serves the configured database")
	sessions, _, err := dc.ListSessions(ctx, tasksessiond.ListFilter{})
	require.NoError(t, err)
	assert.Len(t, sessions, 4, "every racer reached the one daemon: %q", outs)
	// A daemon that lost the race for the database's lock exits on its
	// own, perhaps a moment after the racers are answered.
	assert.Eventually(t, func() bool { return countDaemons(t, sock) == 1 }, 5*time.Second, 20*time.Millisecond,
		"exactly one daemon serves")

	// The hook starts it too, after a crash.
	stopDaemonAt(t, sock)
	cmd = exec.Command(binary, "hook", "claude-code", "--socket", sock)
	cmd.Env = append(os.Environ(), on...)
	cmd.Stdin = strings.NewReader(hookInput("auto", "resume"))
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, string(b))
	assert.Contains(t, string(b), "the daemon was started for me")
}

func TestMCPFollowsClaudeCodesConversation(t *testing.T) {
	// Ensures the real mechanism: a bridge started by Claude Code (its
	// parent, with CLAUDE_CODE_SESSION_ID) serves the conversation's list;
	// after the hook, run with CLAUDE_PID set to that parent, sees /clear's
	// new id, the bridge's next calls go to the new, empty list, and the
	// first conversation keeps its own.
	ctx := context.Background()
	sock := testutil.SocketPath(t)
	startDaemon(t, filepath.Join(t.TempDir(), "m.db"), sock)
	dc := testutil.DialSocket(t, sock)
	hook := func(id, source string) {
		cmd := exec.Command(binary, "hook", "claude-code", "--socket", sock)
		cmd.Env = append(os.Environ(), fmt.Sprintf("CLAUDE_PID=%d", os.Getpid()), "CLAUDE_CODE_SESSION_ID="+id)
		cmd.Stdin = strings.NewReader(hookInput(id, source))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	call := func(cs *mcp.ClientSession, name string, args map[string]any) string {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		require.False(t, r.IsError, text(r))
		return text(r)
	}

	hook("conv-A", "startup")
	cs, _ := mcpSessionEnv(t, []string{"CLAUDECODE=1", "CLAUDE_CODE_SESSION_ID=conv-A", "TASKSESSIOND_SESSION="}, "--socket", sock)
	call(cs, "TaskCreate", map[string]any{"subject": "first conversation"})
	assert.Contains(t, call(cs, "TaskCreate", map[string]any{"subject": "second task"}), "#2 pending:")

	hook("conv-B", "clear")
	assert.Contains(t, call(cs, "TaskList", nil), "The task list is empty", "after /clear the list is the new conversation's")
	assert.Contains(t, call(cs, "TaskCreate", map[string]any{"subject": "after clear"}), "#1 pending:")

	a, err := dc.ResumeSession(ctx, "conv-A")
	require.NoError(t, err)
	assert.Len(t, a.Tasks, 2, "the first conversation keeps its list")
	b, err := dc.ResumeSession(ctx, "conv-B")
	require.NoError(t, err)
	assert.Len(t, b.Tasks, 1)
}

// stopDaemonAt kills the daemon serving socket, if any (its pid from
// daemon/status), and waits for it to go.
func stopDaemonAt(t *testing.T, socket string) {
	t.Helper()
	c, err := client.Dial(context.Background(), socket)
	if err != nil {
		return
	}
	st, err := c.Status(context.Background())
	c.Close()
	if err != nil || st.PID == 0 {
		return
	}
	p, err := os.FindProcess(st.PID)
	require.NoError(t, err)
	p.Kill()
	require.Eventually(t, func() bool {
		c, err := client.Dial(context.Background(), socket)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 10*time.Second, 20*time.Millisecond)
}

// countDaemons counts the processes serving socket.
func countDaemons(t *testing.T, socket string) int {
	t.Helper()
	out, _ := exec.Command("pgrep", "-f", "serve --socket "+socket).Output()
	return len(strings.Fields(string(out)))
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
	assert.Contains(t, text(r), "#4 pending: step 4")
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "TaskList", Arguments: map[string]any{}})
	require.NoError(t, err)
	for i := 1; i <= 4; i++ {
		assert.Contains(t, text(r), fmt.Sprintf("\n#%d [pending] step %d", i, i))
	}
	assert.Contains(t, text(r), "Tasks: 4 pending.", "the update sent while down was not applied")
}

func TestMCPIgnoresAnInheritedClaudePID(t *testing.T) {
	// Ensures a bridge keys its binding by its own parent, not by a
	// CLAUDE_PID it inherited: a Claude Code run inside another one's shell
	// starts its bridge with the outer CLAUDE_PID, and the inner
	// conversation's tasks must still go to the inner conversation's list,
	// whatever the outer one's hook recorded.
	ctx := context.Background()
	sock := testutil.SocketPath(t)
	startDaemon(t, filepath.Join(t.TempDir(), "m.db"), sock)
	dc := testutil.DialSocket(t, sock)
	outer := os.Getppid() // a live process other than the bridge's parent
	cmd := exec.Command(binary, "hook", "claude-code", "--socket", sock)
	cmd.Env = append(os.Environ(), fmt.Sprintf("CLAUDE_PID=%d", outer))
	cmd.Stdin = strings.NewReader(hookInput("outer", "startup"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))

	cs, _ := mcpSessionEnv(t, []string{fmt.Sprintf("CLAUDE_PID=%d", outer), "CLAUDE_CODE_SESSION_ID=inner", "TASKSESSIOND_SESSION="}, "--socket", sock)
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "TaskCreate", Arguments: map[string]any{"subject": "inner work"}})
	require.NoError(t, err)
	require.False(t, r.IsError, text(r))

	inner, err := dc.ResumeSession(ctx, "inner")
	require.NoError(t, err)
	assert.Len(t, inner.Tasks, 1, "the inner conversation's task is in its own list")
	_, err = dc.ResumeSession(ctx, "outer")
	assert.ErrorIs(t, err, client.ErrSessionNotFound, "the outer conversation got nothing")
}
