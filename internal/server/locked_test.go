package server_test

import (
	"bufio"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

// envHoldLock, set to a database path, makes TestHoldWriteLockHelper hold
// that database's write lock (BEGIN IMMEDIATE, as a sqlite3 shell in a
// transaction does) until its standard input closes.
const envHoldLock = "TASKSESSIOND_TEST_HOLD_LOCK"

func TestHoldWriteLockHelper(t *testing.T) {
	path := os.Getenv(envHoldLock)
	if path == "" {
		t.Skip("a helper process of TestLockedStorageIsToldAsLocked")
	}
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer raw.Close()
	conn, err := raw.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
	require.NoError(t, err)
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	_, err = conn.ExecContext(ctx, "ROLLBACK")
	require.NoError(t, err)
}

func TestLockedStorageIsToldAsLocked(t *testing.T) {
	// Ensures a write that finds the database's write lock held by another
	// process is answered -32004 saying so, naming the process, and that
	// writes resume once it lets go.
	path := filepath.Join(t.TempDir(), "test.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, BusyTimeout: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	c := testutil.StartDaemon(t, d).Dial(t)
	s, err := c.CreateSession(ctx, wire.CreateSession{SessionID: "s"})
	require.NoError(t, err)

	holder := exec.Command(os.Args[0], "-test.run=^TestHoldWriteLockHelper$")
	holder.Env = append(os.Environ(), envHoldLock+"="+path)
	stdin, err := holder.StdinPipe()
	require.NoError(t, err)
	stdout, err := holder.StdoutPipe()
	require.NoError(t, err)
	holder.Stderr = os.Stderr
	require.NoError(t, holder.Start())
	t.Cleanup(func() { stdin.Close(); holder.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked\n", line)

	create := client.ToolCall{SessionID: s.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": "after the lock"}, CallID: "c1"}
	_, err = c.CallTool(ctx, create)
	var ce *client.Error
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, int64(wire.CodeStorageUnavailable), ce.Code)
	assert.Contains(t, ce.Message, fmt.Sprintf("the database is locked by another process (pid %d, ", holder.Process.Pid))
	assert.Contains(t, ce.Message, "writes resume when it is released")

	stdin.Close()
	require.NoError(t, holder.Wait())
	r, err := c.CallTool(ctx, create)
	require.NoError(t, err)
	assert.False(t, r.IsError)
	snap, err := c.Snapshot(ctx, s.ID)
	require.NoError(t, err)
	assert.Len(t, snap.Tasks, 1)
}
