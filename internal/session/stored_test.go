package session_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

func TestLogStoresAChangeOnce(t *testing.T) {
	// Ensures a write's log row keeps its result once — the structured
	// result, without the text rendered from it — and the status and only
	// the text fields the call set; that a retry gets the result the first
	// call got, byte for byte; and that the tasks view shows a long
	// description whole (the result's echo shortens it) before the
	// projection, after it, and after a crash left it behind.
	path := filepath.Join(t.TempDir(), "s.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, ProjectInterval: time.Hour})
	require.NoError(t, err)
	m := session.NewManager(d, nil)
	id := newSession(t, m)
	long := strings.Repeat("a long description ", 60) // 1,140 characters
	for i := range 20 {
		call(t, m, id, tools.TaskCreate, fmt.Sprintf(`{"subject":"step %d","description":"details"}`, i+1))
	}
	p := session.CallParams{SessionID: id, Name: tools.TaskCreate, CallID: "c1",
		Arguments: json.RawMessage(`{"subject":"the long one","description":"` + long + `"}`)}
	first, err := m.Call(ctx, p)
	require.NoError(t, err)
	again, err := m.Call(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, string(first), string(again), "a retry gets the recorded result, text included")
	assert.Contains(t, string(first), `"content":[{"type":"text","text":"Created task #21`)
	call(t, m, id, tools.TaskUpdate, `{"taskid":21,"status":"in_progress"}`)

	raw := testutil.RawDB(t, path)
	var result string
	var desc *string
	require.NoError(t, raw.QueryRow(`SELECT result, description FROM tool_calls WHERE session_id = ? AND call_id = 'c1'`, id).Scan(&result, &desc))
	assert.NotContains(t, result, `"content"`, "the text is rendered from the structured result, not stored")
	assert.LessOrEqual(t, len(result), 1024, "a change at 20 open tasks stores ≤ 1 KB of result: %s", result)
	require.NotNil(t, desc)
	assert.Equal(t, long, *desc, "the change column holds the description whole")
	require.NoError(t, raw.QueryRow(`SELECT description FROM tool_calls WHERE session_id = ? ORDER BY seq DESC LIMIT 1`, id).Scan(&desc))
	assert.Nil(t, desc, "a status change does not store the description again")

	viewed := func() (status, description string) {
		t.Helper()
		require.NoError(t, raw.QueryRow(`SELECT status, description FROM tasks WHERE session_id = ? AND taskid = 21`, id).Scan(&status, &description))
		return status, description
	}
	status, description := viewed()
	assert.Equal(t, "inprogress", status)
	assert.Equal(t, long, description, "exact before the projection")

	// What a killed daemon leaves: nothing projected (a clean stop
	// projects, so the projection is taken back by hand); the next open
	// catches up from the log.
	require.NoError(t, d.Close())
	for _, q := range []string{`DELETE FROM task_projection`, `DELETE FROM log_index`, `UPDATE sessions SET projected_seq = 0`, `UPDATE projection_state SET through_rowid = 0`} {
		_, err = raw.Exec(q)
		require.NoError(t, err)
	}
	d, err = db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.Project(ctx)) // the writer has caught up by then
	var projected string
	require.NoError(t, raw.QueryRow(`SELECT description FROM task_projection WHERE session_id = ? AND taskid = 21`, id).Scan(&projected))
	assert.Equal(t, long, projected, "the catch-up projects the whole description")
	status, description = viewed()
	assert.Equal(t, "inprogress", status)
	assert.Equal(t, long, description)
}

func TestLoadStartsFromTheProjection(t *testing.T) {
	// Ensures a session loaded after a restart starts from its projection
	// and replays only the log past it — with the same tasks, next taskid,
	// callIds and forced call as a full replay — and that a projection that
	// does not restore falls back to replaying the whole log.
	path := filepath.Join(t.TempDir(), "p.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, ProjectInterval: time.Hour})
	require.NoError(t, err)
	m := session.NewManager(d, nil)
	id := newSession(t, m)
	for i := range 30 {
		_, err := m.Call(ctx, session.CallParams{SessionID: id, Name: tools.TaskCreate, CallID: fmt.Sprint("c", i),
			Arguments: json.RawMessage(fmt.Sprintf(`{"subject":"step %d"}`, i+1))})
		require.NoError(t, err)
	}
	call(t, m, id, tools.TaskUpdate, `{"taskid":3,"status":"completed"}`)
	require.NoError(t, d.Project(ctx))
	// Past the projection: three more rows.
	call(t, m, id, tools.TaskUpdate, `{"taskid":4,"status":"inprogress","description":"now"}`)
	call(t, m, id, tools.TaskCreate, `{"subject":"step 31"}`)
	call(t, m, id, tools.TaskUpdate, `{"taskid":99,"status":"completed"}`) // an error, logged
	want, err := m.Resume(ctx, id)
	require.NoError(t, err)

	restarted := session.NewManager(d, nil)
	got, err := restarted.Resume(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, want.Tasks, got.Tasks)
	assert.Equal(t, want.NextTaskid, got.NextTaskid)
	assert.Equal(t, 2, got.Replay.Applied, "only the rows past the projection are replayed")
	assert.Equal(t, 1, got.Replay.SkippedErrors)
	retry, err := restarted.Call(ctx, session.CallParams{SessionID: id, Name: tools.TaskCreate, CallID: "c7",
		Arguments: json.RawMessage(`{"subject":"step 8"}`)})
	require.NoError(t, err)
	assert.Equal(t, 8, decodeResult(t, retry).StructuredContent.Task.Taskid, "a callId logged before the projection is known")
	assert.Equal(t, 32, call(t, restarted, id, tools.TaskCreate, `{"subject":"step 32"}`).StructuredContent.Task.Taskid)

	// A successor: its forced call comes back from the projection path too.
	out, err := restarted.Compact(ctx, session.CompactParams{SessionID: id})
	require.NoError(t, err)
	require.NoError(t, d.Project(ctx))
	again, err := session.NewManager(d, nil).Resume(ctx, out.Session.ID)
	require.NoError(t, err)
	require.NotNil(t, again.ForcedCall)
	assert.Equal(t, out.ForcedCall.CallID, again.ForcedCall.CallID)
	assert.Len(t, again.Tasks, 32)

	// A projection that lost a row: the whole log is replayed.
	raw := testutil.RawDB(t, path)
	_, err = raw.Exec(`DELETE FROM task_projection WHERE session_id = ? AND taskid = 1`, id)
	require.NoError(t, err)
	fallback, err := session.NewManager(d, nil).Resume(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, want.NextTaskid+1, fallback.NextTaskid)
	require.Len(t, fallback.Tasks, 32, "from the log, not the projection")
	assert.Equal(t, store.Pending, fallback.Tasks[0].Status)
	require.NoError(t, d.Close())
}
