package main_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

// TestMCPFollowsGeminiSession is the Gemini CLI mechanism without the CLI:
// a bridge started with GEMINI_CLI=1 (this test process its parent, as the
// Gemini process is) serves the session the hook last recorded for that
// parent. The hook runs under a shell that does not exec it (as a wrapper
// script would), so it finds the Gemini process past the shell. /clear's
// hook moves the bridge to the new, empty list; the first keeps its own.
// The hook always prints a JSON object, and takes an unknown event or a
// request without a compression quietly.
func TestMCPFollowsGeminiSession(t *testing.T) {
	ctx := context.Background()
	sock := testutil.SocketPath(t)
	startDaemon(t, filepath.Join(t.TempDir(), "g.db"), sock)
	dc := testutil.DialSocket(t, sock)
	hook := func(input string) string {
		t.Helper()
		cmd := exec.Command("sh", "-c", `"$0" hook gemini --socket "$1"; true`, binary, sock)
		cmd.Stdin = strings.NewReader(input)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err)
		assert.Empty(t, stderr.String())
		var v map[string]any
		require.NoError(t, json.Unmarshal(out, &v), "the hook prints a JSON object: %q", out)
		return string(out)
	}
	start := func(id, source string) string {
		b, _ := json.Marshal(map[string]string{"session_id": id, "hook_event_name": "SessionStart", "source": source,
			"cwd": "/home/u/p", "transcript_path": "/home/u/.gemini/tmp/p/chats/session-" + id + ".json"})
		return hook(string(b))
	}
	call := func(cs *mcp.ClientSession, name string, args map[string]any) string {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		require.False(t, r.IsError, text(r))
		return text(r)
	}

	assert.Equal(t, "{}\n", start("gem-A", "startup"), "a new session: nothing to add")
	cs, _ := mcpSessionEnv(t, []string{"GEMINI_CLI=1", "CLAUDE_CODE_SESSION_ID=", "TASKSESSIOND_SESSION="}, "--socket", sock)
	call(cs, "TaskCreate", map[string]any{"subject": "first", "wait_for_previous": true})
	assert.Contains(t, call(cs, "TaskCreate", map[string]any{"subject": "second", "wait_for_previous": true}), "#2")

	assert.Equal(t, "{}\n", start("gem-B", "clear"))
	assert.Contains(t, call(cs, "TaskList", map[string]any{"wait_for_previous": true}), "empty", "after /clear the list is the new session's")
	assert.Contains(t, call(cs, "TaskCreate", map[string]any{"subject": "after clear"}), "#1")

	a, err := dc.ResumeSession(ctx, "gem-A")
	require.NoError(t, err)
	assert.Len(t, a.Tasks, 2, "the first session keeps its list")
	out := start("gem-A", "resume")
	assert.Contains(t, out, `"additionalContext"`)
	assert.Contains(t, out, "#2 [pending] second")
	assert.Contains(t, call(cs, "TaskCreate", map[string]any{"subject": "third"}), "#3", "resumed: the bridge is back on the first list")

	assert.Equal(t, "{}\n", hook(`{"session_id":"gem-A","hook_event_name":"BeforeModel","llm_request":{"messages":[{"role":"user","content":"hi"}]}}`))
	assert.Equal(t, "{}\n", hook(`{"session_id":"gem-A","hook_event_name":"AfterAgent"}`))
	assert.Contains(t, hook(`{"session_id":"gem-A","hook_event_name":"BeforeModel","llm_request":{"messages":[{"role":"user","content":"<state_snapshot>s</state_snapshot>"}]}}`),
		`#3 [pending] third`)
}
