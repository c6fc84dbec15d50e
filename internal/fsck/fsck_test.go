package fsck_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	s, err := m.Create(ctx, session.CreateParams{SessionID: "s"})
	require.NoError(t, err)
	for _, args := range []string{`{"subject":"a"}`, `{"subject":"b"}`} {
		_, err := m.Call(ctx, session.CallParams{SessionID: s.ID, Name: tools.TaskCreate, Arguments: json.RawMessage(args)})
		require.NoError(t, err)
	}
	_, err = m.Call(ctx, session.CallParams{SessionID: s.ID, Name: tools.TaskUpdate, Arguments: json.RawMessage(`{"taskid":9,"status":"completed"}`)})
	require.NoError(t, err)
	out, err := m.Compact(ctx, session.CompactParams{SessionID: s.ID, NewSessionID: "s2"})
	require.NoError(t, err)
	_, err = m.Call(ctx, session.CallParams{SessionID: "s2", Name: tools.TaskUpdate, Arguments: json.RawMessage(`{"taskid":1,"status":"completed"}`)})
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

func TestFindsASealedProjectionChanged(t *testing.T) {
	// Ensures that a sealed session's projection, which its successor
	// started from (no copy of the list is kept beside it), changed after
	// the seal is reported in both: the parent's disagrees with its log,
	// and the successor's log, replayed from it, with its own projection.
	path := filepath.Join(t.TempDir(), "p.db")
	d := testutil.MustOpenDBAt(t, path)
	old, succ := populate(t, session.NewManager(d, nil))
	require.NoError(t, d.Project(ctx))
	raw := testutil.RawDB(t, path)
	_, err := raw.Exec(`UPDATE task_projection SET subject = 'tampered' WHERE session_id = ? AND taskid = 2`, old)
	require.NoError(t, err)

	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	problems := map[string]string{}
	for _, s := range r.Sessions {
		problems[s.ID] = strings.Join(s.Problems, "; ")
	}
	assert.Contains(t, problems[old], "tampered")
	assert.Contains(t, problems[succ], "tampered")
}

func TestFindsDivergence(t *testing.T) {
	// Ensures a projection that disagrees with the log, and a recorded
	// result the replay does not reproduce, are both reported.
	path := filepath.Join(t.TempDir(), "f.db")
	d := testutil.MustOpenDBAt(t, path)
	old, succ := populate(t, session.NewManager(d, nil))
	require.NoError(t, d.Project(ctx))
	raw := testutil.RawDB(t, path)
	_, err := raw.Exec(`UPDATE task_projection SET subject = 'tampered' WHERE session_id = ? AND taskid = 2`, succ)
	require.NoError(t, err)
	_, err = raw.Exec(`UPDATE tool_calls SET taskid = 7 WHERE session_id = ? AND seq = 2`, old)
	require.NoError(t, err)

	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.False(t, r.OK())
	assert.Equal(t, 2, r.Problems)
	byID := map[string]fsck.Session{}
	for _, s := range r.Sessions {
		byID[s.ID] = s
	}
	require.Len(t, byID[succ].Problems, 1)
	assert.Contains(t, byID[succ].Problems[0], "tampered")
	require.Len(t, byID[old].Problems, 1)
	assert.Contains(t, byID[old].Problems[0], "replay diverges at seq 2")

	one, err := fsck.Check(ctx, d, succ)
	require.NoError(t, err)
	assert.Len(t, one.Sessions, 1)
	assert.Equal(t, 1, one.Problems)
}

func TestBadSnapshot(t *testing.T) {
	// Ensures a successor whose snapshot does not restore is reported by
	// fsck and refused by the daemon's loader when it must start from the
	// snapshot (its first tasks not projected yet), the same rebuild for
	// both, while the other sessions still check and load.
	path := filepath.Join(t.TempDir(), "b.db")
	// The projector runs only when asked: it must not project the
	// successor again while the test takes its projection away.
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal, ProjectInterval: time.Hour})
	require.NoError(t, err)
	defer d.Close()
	old, succ := populate(t, session.NewManager(d, nil))
	require.NoError(t, d.Project(ctx))
	raw := testutil.RawDB(t, path)
	for _, q := range []string{
		// As a successor from before migration 9 holds it, in JSON.
		`UPDATE snapshots SET snapshot = '{"tasks":[],"nextTaskid":0}', projected = 0 WHERE session_id = ?`,
		`DELETE FROM task_projection WHERE session_id = ?`,
		`UPDATE sessions SET projected_seq = 0 WHERE id = ?`,
	} {
		_, err := raw.Exec(q, succ)
		require.NoError(t, err)
	}

	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, 1, r.Problems)
	for _, s := range r.Sessions {
		if s.ID == succ {
			require.Len(t, s.Problems, 1)
			assert.Contains(t, s.Problems[0], "snapshot does not restore")
		} else {
			assert.Empty(t, s.Problems)
		}
	}

	m := session.NewManager(d, nil)
	_, err = m.Resume(ctx, succ)
	assert.Equal(t, wire.CodeInternal, session.ErrorCode(err), "%v", err)
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
	require.NoError(t, d.Project(ctx)) // the tasks view reads the projection, not the tampered result
	raw := testutil.RawDB(t, path)
	// seq 2 of the successor is its update of #1 (seq 1 is the forced TaskList).
	_, err := raw.Exec(`UPDATE tool_calls SET status = 'deleted' WHERE session_id = ? AND seq = 2`, succ)
	require.NoError(t, err)
	r, err := fsck.Sessions(ctx, d, succ)
	require.NoError(t, err)
	require.Len(t, r.Sessions, 1)
	require.Len(t, r.Sessions[0].Problems, 1, "%+v", r)
	assert.Contains(t, r.Sessions[0].Problems[0], "TaskUpdate recorded task 1 deleted")
}

func TestBesideARunningWriter(t *testing.T) {
	// Ensures fsck run while the daemon writes reports no divergence that
	// is not there: each session is read as of one moment.
	d := testutil.MustOpenDB(t)
	m := session.NewManager(d, nil)
	_, err := m.Create(ctx, session.CreateParams{SessionID: "busy"})
	require.NoError(t, err)
	for range 100 { // a log long enough that reading it takes a while
		_, err := m.Call(ctx, session.CallParams{SessionID: "busy", Name: tools.TaskCreate, Arguments: json.RawMessage(`{"subject":"t"}`)})
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
			if _, err := m.Call(ctx, session.CallParams{SessionID: "busy", Name: name, Arguments: json.RawMessage(args)}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	checks := 0
	var werr error
	finished := false
	for checks < 15 && !finished {
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
	// successor started without it, so the lineage lost it. And that a
	// daemon started on such a file does not project the row into the
	// sealed session, whose projection its successor starts from: the
	// successor's list stays as it was, and the report the same.
	path := filepath.Join(t.TempDir(), "seal.db")
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
		VALUES (?, 4, 'TaskCreate', '{"subject":"after the seal"}', 0, '{"content":[],"structuredContent":{"task":{"taskid":3}}}', 0, '2026-01-02T03:04:06.000000Z',
			3, 'pending', 'after the seal', '')`, old)
	require.NoError(t, err)
	d, err = db.Open(ctx, path, db.Options{Sync: db.SyncNormal}) // catches up what it finds unprojected
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.Project(ctx))
	after, err := d.LoadSession(ctx, succ)
	require.NoError(t, err)
	assert.Equal(t, before.Snapshot, after.Snapshot, "the successor's first tasks")
	r, err = fsck.Check(ctx, d, old)
	require.NoError(t, err)
	require.False(t, r.OK())
	assert.Contains(t, strings.Join(r.Sessions[0].Problems, "\n"), "rows logged after its seal: its log replays to 3 tasks (next #4), its successor s2 started from 2 (next #3)")
}

func TestFindsTheLogIndexAstray(t *testing.T) {
	// Ensures fsck checks the projector's index of the log: a row logged
	// twice under one seq by another program (the daemon refuses it) is
	// left out of the index and reported, and so is an index entry that
	// points at another call's row.
	path := filepath.Join(t.TempDir(), "index.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	_, succ := populate(t, session.NewManager(d, nil))
	require.NoError(t, d.Close())

	raw := testutil.RawDB(t, path)
	_, err = raw.Exec(`INSERT INTO tool_calls (session_id, seq, name, arguments, result, created_at) VALUES (?, 1, 'TaskList', '{}', '{}', '2026-01-02T03:04:06.000000Z')`, succ)
	require.NoError(t, err)
	d, err = db.Open(ctx, path, db.Options{Sync: db.SyncNormal}) // indexes what is past the mark
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.Project(ctx)) // the writer has caught up by then
	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	require.Len(t, r.Integrity, 1, "%+v", r)
	assert.Regexp(t, `^log row \d+ \(session `+succ+`, seq 1\) is missing from log_index$`, r.Integrity[0])

	_, err = raw.Exec(`UPDATE log_index SET call = (SELECT min(rowid) FROM tool_calls WHERE session_id != ?1) WHERE session_id = ?1 AND seq = 1`, succ)
	require.NoError(t, err)
	r, err = fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.Contains(t, strings.Join(r.Integrity, "\n"), "log_index (session "+succ+", seq 1) points at row")
}
