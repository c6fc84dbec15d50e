package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// assertMemoryEqualsDatabase resumes id in m and in a fresh manager (which
// replays from the database) and compares.
func assertMemoryEqualsDatabase(t *testing.T, d *db.DB, m *session.Manager, id string) wire.Resumed {
	t.Helper()
	mem, err := m.Resume(ctx, id)
	require.NoError(t, err)
	disk, err := session.NewManager(d, nil).Resume(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, disk.Tasks, mem.Tasks)
	assert.Equal(t, disk.NextTaskid, mem.NextTaskid)
	return mem
}

func TestDiskFull(t *testing.T) {
	// Ensures a full disk (the file capped with max_page_count) fails
	// writes with storage unavailable, leaves memory equal to the database,
	// keeps reads working, and that writes resume when there is room again.
	path := filepath.Join(t.TempDir(), "full.db")
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, MaxBytes: 96 << 10})
	require.NoError(t, err)
	defer d.Close()
	m := session.NewManager(d, nil)
	id := newSession(t, m)

	var acked int
	var fullErr error
	for i := 0; i < 1000 && fullErr == nil; i++ {
		_, fullErr = m.Call(ctx, wire.ToolCall{SessionID: id, Name: tools.TaskCreate,
			Arguments: json.RawMessage(fmt.Sprintf(`{"subject":"task %d","description":"%0500d"}`, i, i))})
		if fullErr == nil {
			acked++
		}
	}
	require.Error(t, fullErr, "the cap was reached")
	assert.Equal(t, tasksessiond.KindUnavailable, tasksessiond.KindOf(fullErr))
	assert.Contains(t, fullErr.Error(), "nothing was changed")

	got := assertMemoryEqualsDatabase(t, d, m, id)
	assert.Len(t, got.Tasks, acked, "every acknowledged create, and nothing else")
	list := call(t, m, id, tools.TaskList, `{}`)
	assert.Len(t, list.StructuredContent.Tasks, acked, "reads keep working on a full disk")

	require.NoError(t, d.SetMaxBytes(ctx, 0))
	res := call(t, m, id, tools.TaskCreate, `{"subject":"after room was made"}`)
	assert.Equal(t, acked+1, res.StructuredContent.Task.Taskid)
}

func TestDatabaseLockedByAnotherProcess(t *testing.T) {
	// Ensures a write lock held elsewhere fails a write with storage
	// unavailable after the busy timeout, and writes resume once it is released.
	path := filepath.Join(t.TempDir(), "locked.db")
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, BusyTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	defer d.Close()
	m := session.NewManager(d, nil)
	id := newSession(t, m)
	call(t, m, id, tools.TaskCreate, `{"subject":"one"}`)

	raw := testutil.RawDB(t, path)
	conn, err := raw.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `BEGIN IMMEDIATE`)
	require.NoError(t, err)

	_, err = m.Call(ctx, wire.ToolCall{SessionID: id, Name: tools.TaskCreate, Arguments: json.RawMessage(`{"subject":"blocked"}`)})
	assert.Equal(t, tasksessiond.KindUnavailable, tasksessiond.KindOf(err))
	got := assertMemoryEqualsDatabase(t, d, m, id)
	assert.Len(t, got.Tasks, 1)

	_, err = conn.ExecContext(context.Background(), `ROLLBACK`)
	require.NoError(t, err)
	res := call(t, m, id, tools.TaskCreate, `{"subject":"two"}`)
	assert.Equal(t, 2, res.StructuredContent.Task.Taskid)
}

func TestFileTurnsReadOnly(t *testing.T) {
	// Ensures that when the database files stop taking writes (made
	// immutable under the running daemon, which refuses writes even through
	// open descriptors), writes fail with storage unavailable and change
	// nothing, reads go on, and writes resume once the files are writable.
	path := filepath.Join(t.TempDir(), "ro.db")
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	defer d.Close()
	m := session.NewManager(d, nil)
	id := newSession(t, m)
	call(t, m, id, tools.TaskCreate, `{"subject":"one"}`)

	files := []string{path, path + "-wal"}
	if out, err := exec.Command("chattr", append([]string{"+i"}, files...)...).CombinedOutput(); err != nil {
		t.Skipf("cannot make the files immutable here (needs root and a filesystem with chattr): %v %s", err, out)
	}
	defer exec.Command("chattr", append([]string{"-i"}, files...)...).Run()

	_, err = m.Call(ctx, wire.ToolCall{SessionID: id, Name: tools.TaskCreate, Arguments: json.RawMessage(`{"subject":"refused"}`)})
	assert.Equal(t, tasksessiond.KindUnavailable, tasksessiond.KindOf(err))
	list := call(t, m, id, tools.TaskList, `{}`)
	assert.Len(t, list.StructuredContent.Tasks, 1, "reads go on")
	got := assertMemoryEqualsDatabase(t, d, m, id)
	assert.Len(t, got.Tasks, 1)

	require.NoError(t, exec.Command("chattr", append([]string{"-i"}, files...)...).Run())
	res := call(t, m, id, tools.TaskCreate, `{"subject":"two"}`)
	assert.Equal(t, 2, res.StructuredContent.Task.Taskid)
}

func TestUnloggedErrorResultRetriedAnswersSame(t *testing.T) {
	// Ensures an error result answered though its row could not be written
	// (the database locked elsewhere) is answered the same when retried
	// with its callId, even once the call would now succeed.
	path := filepath.Join(t.TempDir(), "unlogged.db")
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, BusyTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	defer d.Close()
	m := session.NewManager(d, nil)
	id := newSession(t, m)
	call(t, m, id, tools.TaskCreate, `{"subject":"one"}`)

	raw := testutil.RawDB(t, path)
	conn, err := raw.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `BEGIN IMMEDIATE`)
	require.NoError(t, err)
	p := wire.ToolCall{SessionID: id, Name: tools.TaskUpdate, Arguments: json.RawMessage(`{"taskid":2,"status":"completed"}`), CallID: "k"}
	first, err := m.Call(ctx, p)
	require.NoError(t, err, "an error result is answered unlogged")
	_, err = conn.ExecContext(context.Background(), `ROLLBACK`)
	require.NoError(t, err)
	call(t, m, id, tools.TaskCreate, `{"subject":"two"}`)
	again, err := m.Call(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, string(first), string(again))
}
