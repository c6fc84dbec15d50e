package fsck_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/fsck"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

var ctx = context.Background()

func populate(t *testing.T, m *session.Manager) (string, string) {
	t.Helper()
	s, err := m.Create(ctx, wire.CreateSession{SessionID: "s"})
	require.NoError(t, err)
	for _, args := range []string{`{"subject":"a"}`, `{"subject":"b"}`} {
		_, err := m.Call(ctx, wire.ToolCall{SessionID: s.ID, Name: tools.TaskCreate, Arguments: json.RawMessage(args)})
		require.NoError(t, err)
	}
	_, err = m.Call(ctx, wire.ToolCall{SessionID: s.ID, Name: tools.TaskUpdate, Arguments: json.RawMessage(`{"taskid":9,"status":"completed"}`)})
	require.NoError(t, err)
	out, err := m.Compact(ctx, wire.Compact{SessionID: s.ID, NewSessionID: "s2"})
	require.NoError(t, err)
	_, err = m.Call(ctx, wire.ToolCall{SessionID: "s2", Name: tools.TaskUpdate, Arguments: json.RawMessage(`{"taskid":1,"status":"completed"}`)})
	require.NoError(t, err)
	return s.ID, out.Session.ID
}

func TestHealthy(t *testing.T) {
	// Ensures a database the daemon wrote checks clean, compacted sessions included.
	d := testutil.MustOpenDB(t)
	populate(t, session.NewManager(d, nil))
	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.True(t, r.OK(), "%+v", r)
	require.Len(t, r.Sessions, 2)
	for _, s := range r.Sessions {
		assert.Equal(t, 2, s.Tasks)
	}
}

func TestBadSnapshot(t *testing.T) {
	// Ensures a successor whose snapshot does not restore is reported by
	// fsck and refused by the daemon's loader, the same rebuild for both,
	// while the other sessions still check and load.
	path := filepath.Join(t.TempDir(), "b.db")
	d := testutil.MustOpenDBAt(t, path)
	old, succ := populate(t, session.NewManager(d, nil))
	raw := testutil.RawDB(t, path)
	_, err := raw.Exec(`UPDATE snapshots SET next_taskid = 2 WHERE session_id = ?`, succ) // it holds #2
	require.NoError(t, err)

	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, 2, r.Problems, "the snapshot, and the chain that starts from it")
	for _, s := range r.Sessions {
		if s.ID == succ {
			require.Len(t, s.Problems, 2)
			assert.Contains(t, s.Problems[0], "snapshot does not restore")
		} else {
			assert.Empty(t, s.Problems)
		}
	}

	m := session.NewManager(d, nil)
	_, err = m.Resume(ctx, succ)
	assert.Equal(t, tasksessiond.KindDamaged, tasksessiond.KindOf(err), "%v", err)
	assert.ErrorContains(t, err, "corrupt snapshot")
	_, err = m.Resume(ctx, old)
	assert.NoError(t, err)
}

func TestChecksEveryRecordedUpdate(t *testing.T) {
	// Ensures an update whose recorded task the replay does not reproduce
	// is reported, not only a create's.
	path := filepath.Join(t.TempDir(), "u.db")
	d := testutil.MustOpenDBAt(t, path)
	_, succ := populate(t, session.NewManager(d, nil))
	raw := testutil.RawDB(t, path)
	// seq 2 of the successor is its update of #1 (seq 1 is the forced TaskList).
	_, err := raw.Exec(`UPDATE tool_calls SET status = 'deleted' WHERE session_id = ? AND seq = 2`, succ)
	require.NoError(t, err)
	r, err := fsck.Sessions(ctx, d, succ)
	require.NoError(t, err)
	require.Len(t, r.Sessions, 1)
	require.Len(t, r.Sessions[0].Problems, 2, "%+v", r)
	assert.Contains(t, r.Sessions[0].Problems[0], "TaskUpdate recorded task 1 deleted")
	assert.Contains(t, r.Sessions[0].Problems[1], "the tasks view has {Taskid:1 Status:deleted", "the view reads the tampered column")
}

func TestBesideARunningWriter(t *testing.T) {
	// Ensures fsck run while the daemon writes reports no divergence that
	// is not there: each session is read as of one moment.
	d := testutil.MustOpenDB(t)
	m := session.NewManager(d, nil)
	_, err := m.Create(ctx, wire.CreateSession{SessionID: "busy"})
	require.NoError(t, err)
	for range 100 { // a log long enough that reading it takes a while
		_, err := m.Call(ctx, wire.ToolCall{SessionID: "busy", Name: tools.TaskCreate, Arguments: json.RawMessage(`{"subject":"t"}`)})
		require.NoError(t, err)
	}
	// The writer's work is bounded: each check reads the whole log, so a
	// writer that never stopped would make a slow machine slower still.
	const maxWrites = 1500
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := range maxWrites {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			args := `{"subject":"t"}`
			name := tools.TaskCreate
			if i%2 == 1 {
				name, args = tools.TaskUpdate, `{"taskid":1,"status":"inprogress","subject":"u`+strconv.Itoa(i)+`"}`
			}
			if _, err := m.Call(ctx, wire.ToolCall{SessionID: "busy", Name: name, Arguments: json.RawMessage(args)}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	checks := 0
	var werr error
	finished := false
	for checks < 6 && !finished { // each check reads the log as the writer grows it
		r, err := fsck.Sessions(ctx, d, "busy")
		require.NoError(t, err)
		assert.True(t, r.OK(), "%+v", r)
		checks++
		select {
		case werr = <-done:
			finished = true
		default:
		}
	}
	if !finished {
		close(stop)
		werr = <-done
	}
	require.NoError(t, werr)
	assert.GreaterOrEqual(t, checks, 3, "checks made while the writer wrote")
}

func TestFindsRowsLoggedAfterASeal(t *testing.T) {
	// Ensures a row logged into a session after it was compacted (as a
	// second daemon on the same file could once do) is reported: its
	// successor started without it, so the lineage lost it; the
	// successor's list stays as it was.
	path := filepath.Join(t.TempDir(), "seal.db")
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	old, succ := populate(t, session.NewManager(d, nil))
	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	require.True(t, r.OK(), "%+v", r)
	before, err := d.LoadSession(ctx, succ)
	require.NoError(t, err)
	require.NoError(t, d.Close())

	raw := testutil.RawDB(t, path)
	_, err = raw.Exec(`INSERT INTO tool_calls (session_id, seq, name, arguments, is_error, result, forced, created_at, taskid, status, subject, description)
		VALUES (?, 4, 'TaskCreate', '{"subject":"after the seal"}', 0, '{"structuredContent":{"task":{"taskid":3,"status":"pending","subject":"after the seal","description":""}},"isError":false}', 0, '2099-01-02T03:04:06.000000Z',
			3, 'pending', 'after the seal', '')`, old)
	require.NoError(t, err)
	d, err = db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	defer d.Close()
	after, err := d.LoadSession(ctx, succ)
	require.NoError(t, err)
	assert.Equal(t, before.Snapshot, after.Snapshot, "the successor's first tasks")
	r, err = fsck.Check(ctx, d, succ)
	require.NoError(t, err)
	require.False(t, r.OK())
	require.Len(t, r.Sessions, 1, "the parent is replayed, not reported")
	assert.Contains(t, strings.Join(r.Sessions[0].Problems, "\n"), "its snapshot differs from its parent s's log replayed: the parent replays to 3 tasks (next #4), the snapshot holds 2 (next #3); task #3 is missing from the snapshot (s has 1 rows logged after it was made, which it never got)")
}

func TestFindsASnapshotThatDiffersFromItsParentsLog(t *testing.T) {
	// Ensures a successor's first tasks changed by hand are reported at
	// its parent, whose log replays to something else.
	path := filepath.Join(t.TempDir(), "p.db")
	d := testutil.MustOpenDBAt(t, path)
	old, succ := populate(t, session.NewManager(d, nil))
	_, err := testutil.RawDB(t, path).Exec(`UPDATE snapshot_tasks SET subject = 'tampered' WHERE session_id = ? AND taskid = 2`, succ)
	require.NoError(t, err)
	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, 2, r.Problems, "the snapshot, and the chain that starts from it: %+v", r)
	assert.Empty(t, problems(r)[old])
	assert.Contains(t, problems(r)[succ], "its snapshot differs from its parent "+old+"'s log replayed: the parent replays to 2 tasks (next #3), the snapshot holds 2 (next #3); task #2 differs (its snapshot rows were edited by hand?)")
}

func TestRepairRewritesWhatIsDerivedFromTheLog(t *testing.T) {
	// Ensures fsck reads the log from the table, replays it, and reports
	// what beside it disagrees: a row's change columns edited by hand
	// (the tasks view then shows the edit) and a row of a session that
	// does not exist; and that Repair rewrites the columns from the log, after
	// which the check is clean but for what is in the log itself.
	path := filepath.Join(t.TempDir(), "r.db")
	d := testutil.MustOpenDBAt(t, path)
	old, succ := populate(t, session.NewManager(d, nil))
	raw := testutil.RawDB(t, path)
	for _, q := range []string{
		`UPDATE tool_calls SET subject = 'tampered' WHERE session_id = '` + old + `' AND seq = 2`,
		`UPDATE tool_calls SET status = 'deleted' WHERE session_id = '` + succ + `' AND seq = 2`,
	} {
		_, err := raw.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, raw.Close())
	raw = testutil.RawDB(t, path)
	for _, q := range []string{
		`INSERT INTO tool_calls (session_id, seq, name, arguments, result, created_at, taskid, status, subject, description)
			VALUES ('` + succ + `', 3, 'TaskCreate', '{"subject":"c"}', '{}', '2026-01-02T03:04:06.000000Z', 3, 'pending', 'c', '')`,
		`INSERT INTO tool_calls (session_id, seq, name, arguments, result, created_at) VALUES ('ghost', 1, 'TaskList', '{}', '{}', '2026-01-02T03:04:06.000000Z')`,
	} {
		_, err := raw.Exec(q)
		require.NoError(t, err, q)
	}
	// The planted row chained, as an edit recomputing every checksum would.
	testutil.Rechain(t, raw, succ)
	require.NoError(t, raw.Close())
	require.NoError(t, d.Close())
	d = testutil.MustOpenDBAt(t, path)

	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	got := problems(r)
	assert.Contains(t, got[old], "replay diverges at seq 2")
	assert.Contains(t, got[old], "the tasks view has {Taskid:2 Status:pending Subject:tampered")
	assert.Contains(t, got[succ], "replay diverges at seq 2: TaskUpdate recorded task 1 deleted")
	assert.Equal(t, []string{"ghost"}, r.Orphans)

	before, done, err := fsck.Repair(ctx, d)
	require.NoError(t, err)
	assert.False(t, before.OK())
	assert.Equal(t, 2, done.Rewrote)
	assert.Empty(t, done.Left)
	after, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.Empty(t, after.Integrity)
	assert.Equal(t, []string{"ghost"}, after.Orphans, "a row of the log itself is left as it is")
	assert.Equal(t, 1, after.Problems, "%+v", after)
	tasks, err := d.Tasks(ctx, succ)
	require.NoError(t, err)
	assert.Len(t, tasks, 3)
	assert.Equal(t, "completed", string(tasks[0].Status))
}

func problems(r fsck.Report) map[string]string {
	out := map[string]string{}
	for _, s := range r.Sessions {
		out[s.ID] = strings.Join(s.Problems, "; ")
	}
	return out
}
