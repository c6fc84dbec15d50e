package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestCompactionSurvivesKill(t *testing.T) {
	// Ensures the compaction flow end to end: tasks completed and deleted
	// are injected and listed by the forced TaskList, ids continue, the old
	// session is sealed, and after SIGKILL and a restart the new session
	// resumes with the same store and messages.
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "c.db")
	sock := testutil.SocketPath(t)
	p := startDaemon(t, dbPath, sock)
	c := testutil.DialSocket(t, sock)

	s, err := c.CreateSession(ctx, wire.CreateSession{Title: "long job"})
	require.NoError(t, err)
	for _, subj := range []string{"plan", "build", "abandoned idea"} {
		_, err := c.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": subj}})
		require.NoError(t, err)
	}
	for _, u := range []map[string]any{{"taskid": 1, "status": "completed"}, {"taskid": 3, "status": "deleted"}, {"taskid": 2, "status": "inprogress"}} {
		_, err := c.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskUpdate", Arguments: u})
		require.NoError(t, err)
	}
	snap, err := c.Snapshot(ctx, s.ID)
	require.NoError(t, err)

	out, err := c.Compact(ctx, wire.Compact{SessionID: s.ID, Summary: "built the plan"})
	require.NoError(t, err)
	require.Len(t, out.Messages, 2)
	assert.Equal(t, "task_snapshot", out.Messages[0].Kind)
	assert.Equal(t, snap.Text, out.Messages[0].Content)
	for _, line := range []string{"#1 [completed] plan", "#2 [inprogress] build", "#3 [deleted] abandoned idea"} {
		assert.Contains(t, out.Messages[0].Content, line)
	}
	var forced wire.CallToolResult
	require.NoError(t, json.Unmarshal(out.ForcedCall.Result, &forced))
	assert.ElementsMatch(t, snap.Tasks, must(forced.Listing()).Tasks)
	assert.Contains(t, forced.Text(), "#3 [deleted] abandoned idea")

	_, err = c.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": "late"}})
	var ce *client.Error
	require.True(t, errors.As(err, &ce))
	assert.ErrorIs(t, err, client.ErrSessionSealed)
	assert.Equal(t, out.Session.ID, ce.SuccessorID())

	next, err := c.CallTool(ctx, client.ToolCall{SessionID: out.Session.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": "ship"}})
	require.NoError(t, err)
	assert.Equal(t, 4, must(next.Written()).Task.Taskid)
	before, err := c.ResumeSession(ctx, out.Session.ID)
	require.NoError(t, err)

	p.kill(t)
	startDaemon(t, dbPath, sock)
	c2 := testutil.DialSocket(t, sock)
	after, err := c2.ResumeSession(ctx, out.Session.ID)
	require.NoError(t, err)
	assert.Equal(t, before.Tasks, after.Tasks)
	assert.Equal(t, before.Messages, after.Messages)
	assert.Equal(t, out.Messages, after.Messages)
	require.NotNil(t, after.ForcedCall)
	assert.Equal(t, out.ForcedCall.CallID, after.ForcedCall.CallID)
	assert.JSONEq(t, string(out.ForcedCall.Result), string(after.ForcedCall.Result))
	assert.Equal(t, 5, after.NextTaskid)

	// The CLI shows the lineage and the snapshot.
	lin, _, code := cli(t, sock, "lineage", out.Session.ID)
	require.Equal(t, 0, code)
	assert.Contains(t, lin, s.ID)
	assert.Contains(t, lin, "compacted")
	assert.Contains(t, lin, out.Session.ID+"  active")
	text, _, code := cli(t, sock, "snapshot", out.Session.ID)
	require.Equal(t, 0, code)
	assert.Contains(t, text, "#4 [pending] ship")
}

func TestCompactCLI(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "c.db")
	sock := testutil.SocketPath(t)
	startDaemon(t, dbPath, sock)
	_, _, code := cli(t, sock, "new", "--id", "g1")
	require.Equal(t, 0, code)
	_, _, code = cli(t, sock, "call", "g1", "TaskCreate", `{"subject":"carry me"}`)
	require.Equal(t, 0, code)
	summary := filepath.Join(t.TempDir(), "summary.txt")
	require.NoError(t, os.WriteFile(summary, []byte("what happened so far"), 0o600))

	out, _, code := cli(t, sock, "compact", "g1", "--summary-file", summary, "--new-id", "g2", "--json")
	require.Equal(t, 0, code)
	var res wire.Compacted
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, "g2", res.Session.ID)
	assert.Equal(t, "what happened so far", res.Messages[1].Content)

	out, _, code = cli(t, sock, "compact", "g2")
	require.Equal(t, 0, code)
	g3 := strings.TrimSpace(out)
	_, errOut, code := cli(t, sock, "compact", "g1")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "was compacted into g2")
	tasks, _, code := cli(t, sock, "tasks", g3)
	require.Equal(t, 0, code)
	assert.Contains(t, tasks, "carry me")
}
