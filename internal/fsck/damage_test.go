package fsck_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/fsck"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// The cases of a database edited by hand, each done as a user of the
// sqlite3 shell would do it (foreign keys off, as the shell has them), on
// a real file: a session S of six tasks (callIds c1…c8), compacted into N,
// which created two more and completed #1.

const (
	sS = "S"
	sN = "N"
)

func lineageDB(t testing.TB) string {
	t.Helper()
	return fixture(t, "lineage", buildLineageDB)
}

// fixtures are the files fixture built, by name.
var fixtures struct {
	sync.Mutex
	files map[string][]byte
}

// fixture returns a copy, in t's temp dir, of the database build made: it
// is built once in this process (the first case to ask waits for it) and
// each case damages a copy of its own. The builds are deterministic (the
// clock is testutil's), so a copy is the file a build would have made.
func fixture(t testing.TB, name string, build func(testing.TB) string) string {
	t.Helper()
	fixtures.Lock()
	defer fixtures.Unlock()
	b, ok := fixtures.files[name]
	if !ok {
		from := build(t)
		_, err := os.Stat(from + "-wal")
		require.ErrorIs(t, err, fs.ErrNotExist, "a closed fixture is its one file")
		b, err = os.ReadFile(from)
		require.NoError(t, err)
		if fixtures.files == nil {
			fixtures.files = map[string][]byte{}
		}
		fixtures.files[name] = b
	}
	path := filepath.Join(t.TempDir(), "t.db")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

func buildLineageDB(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	d := testutil.MustOpenDBAt(t, path)
	m := session.NewManager(d, nil)
	_, err := m.Create(ctx, wire.CreateSession{SessionID: sS})
	require.NoError(t, err)
	do := func(id, callID, name, args string) {
		t.Helper()
		_, err := m.Call(ctx, wire.ToolCall{SessionID: id, CallID: callID, Name: name, Arguments: []byte(args)})
		require.NoError(t, err)
	}
	for i, subject := range []string{"a", "b", "c", "d", "e", "f"} {
		do(sS, "c"+string(rune('1'+i)), tools.TaskCreate, `{"subject":"`+subject+`"}`)
	}
	do(sS, "c7", tools.TaskUpdate, `{"taskid":2,"status":"completed"}`)
	do(sS, "c8", tools.TaskUpdate, `{"taskid":3,"status":"inprogress"}`)
	_, err = m.Compact(ctx, wire.Compact{SessionID: sS, NewSessionID: sN})
	require.NoError(t, err)
	do(sN, "n1", tools.TaskCreate, `{"subject":"g"}`)
	do(sN, "n2", tools.TaskCreate, `{"subject":"h"}`)
	do(sN, "n3", tools.TaskUpdate, `{"taskid":1,"status":"completed"}`)
	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	require.True(t, r.OK(), "%+v", r)
	require.NoError(t, d.Close())
	return path
}

// damage runs statements on the file as the sqlite3 shell would.
func damage(t testing.TB, path string, stmts ...string) {
	t.Helper()
	raw := testutil.RawDB(t, path)
	for _, q := range stmts {
		_, err := raw.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, raw.Close())
}

// changeColumns dumps every row's change columns, to show repair left
// them alone.
func changeColumns(t *testing.T, path string) string {
	t.Helper()
	rows, err := testutil.RawDB(t, path).Query(`SELECT session_id, seq, quote(taskid), quote(status), quote(subject), quote(description) FROM tool_calls ORDER BY 1, 2`)
	require.NoError(t, err)
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var s, a, c, d, e string
		var seq int
		require.NoError(t, rows.Scan(&s, &seq, &a, &c, &d, &e))
		b.WriteString(strings.Join([]string{s, a, c, d, e}, " ") + "\n")
	}
	require.NoError(t, rows.Err())
	return b.String()
}

func sessionOf(r fsck.Report, id string) fsck.Session {
	for _, s := range r.Sessions {
		if s.ID == id {
			return s
		}
	}
	return fsck.Session{}
}

func TestCase1FsckGoesOnPastWhatRowsHold(t *testing.T) {
	// Ensures fsck and repair read rows whose change columns are NULL, a
	// snapshot with rows deleted and a log with a middle TaskCreate
	// deleted, report each and go on to the next session; repair rewrites
	// only a consistent replay's change columns.
	t.Run("NullChangeColumns", func(t *testing.T) {
		// Ensures a create's change columns set to NULL are reported and
		// rewritten from its replay; the later session is checked too.
		path := lineageDB(t)
		damage(t, path, `UPDATE tool_calls SET taskid=NULL, status=NULL, subject=NULL, description=NULL WHERE session_id='S' AND seq=1`)
		d := testutil.MustOpenDBAt(t, path)
		r, err := fsck.Check(ctx, d)
		require.NoError(t, err)
		assert.Contains(t, problems(r)[sS], `seq 1: its change columns hold no change, its arguments replay to task 1 pending subject "a"`)
		assert.False(t, sessionOf(r, sS).LogDamaged)
		assert.Empty(t, problems(r)[sN], "the later session is checked, and clean")
		assert.Equal(t, 4, sessionOf(r, sN).Rows)
		_, done, err := fsck.Repair(ctx, d)
		require.NoError(t, err)
		assert.Equal(t, 1, done.Rewrote)
		after, err := fsck.Check(ctx, d)
		require.NoError(t, err)
		assert.True(t, after.OK(), "%+v", after)
	})
	t.Run("SnapshotRowsDeleted", func(t *testing.T) {
		// Ensures a successor's snapshot rows deleted are reported at the
		// successor, which repair leaves as it is.
		path := lineageDB(t)
		damage(t, path, `DELETE FROM snapshot_tasks WHERE session_id='N' AND taskid IN (1, 2)`)
		before := changeColumns(t, path)
		d := testutil.MustOpenDBAt(t, path)
		r, err := fsck.Check(ctx, d)
		require.NoError(t, err)
		n := sessionOf(r, sN)
		assert.Contains(t, problems(r)[sN], "its snapshot differs from its parent S's log replayed: the parent replays to 6 tasks (next #7), the snapshot holds 4 (next #7); task #1 is missing from the snapshot")
		assert.True(t, n.LogDamaged)
		assert.Empty(t, problems(r)[sS])
		_, done, err := fsck.Repair(ctx, d)
		require.NoError(t, err)
		assert.Equal(t, []string{sN}, done.Left)
		assert.Equal(t, before, changeColumns(t, path), "nothing rebuilt from a damaged replay")
	})
	t.Run("MiddleCreateDeleted", func(t *testing.T) {
		// Ensures a TaskCreate deleted from the middle of a log is found
		// (a gap, and the later creates' ids shifted), the session is left
		// as it is, and the next session still checked.
		path := lineageDB(t)
		damage(t, path, `DELETE FROM tool_calls WHERE session_id='S' AND seq=3`)
		before := changeColumns(t, path)
		d := testutil.MustOpenDBAt(t, path)
		r, err := fsck.Check(ctx, d)
		require.NoError(t, err)
		got := problems(r)[sS]
		assert.Contains(t, got, "log has seq 4 where 3 was expected")
		assert.Contains(t, got, "seq 4: its result told the model {Taskid:4 Status:pending Subject:d Description:}, its arguments replay to {Taskid:3 Status:pending Subject:d Description:}")
		assert.True(t, sessionOf(r, sS).LogDamaged)
		assert.Equal(t, 4, sessionOf(r, sN).Rows, "the next session is checked")
		_, done, err := fsck.Repair(ctx, d)
		require.NoError(t, err)
		assert.Contains(t, done.Left, sS)
		assert.Equal(t, before, changeColumns(t, path))
	})
}

func TestCase2MissingIndex(t *testing.T) {
	// Ensures a dropped index is a named problem: the daemon answers every
	// read from the log and says in its status which index is gone; fsck
	// names it and goes on; repair makes it from the schema's definition.
	path := lineageDB(t)
	damage(t, path, `DROP INDEX sessions_parent`)
	d := testutil.MustOpenDBAt(t, path)
	dm := testutil.StartDaemon(t, d)
	c := dm.Dial(t)
	list, _, err := c.ListSessions(ctx, tasksessiond.ListFilter{})
	require.NoError(t, err)
	require.Len(t, list, 2)
	got, err := c.GetSession(ctx, sN)
	require.NoError(t, err)
	assert.Equal(t, tasksessiond.Counts{Total: 8, Pending: 5, InProgress: 1, Completed: 2}, got.Counts)
	res, err := c.ResumeSession(ctx, sN)
	require.NoError(t, err)
	assert.Len(t, res.Tasks, 8)
	st, err := c.Status(ctx)
	require.NoError(t, err)
	assert.Contains(t, st.Problem, "index sessions_parent is missing (tasksessiond fsck --repair creates it)")

	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, []string{"index sessions_parent is missing (tasksessiond fsck --repair creates it)"}, r.Indexes)
	assert.Len(t, r.Sessions, 2)

	require.NoError(t, d.Close()) // repair wants the file to itself
	d2 := testutil.MustOpenDBAt(t, path)
	_, done, err := fsck.Repair(ctx, d2)
	require.NoError(t, err)
	assert.Equal(t, []string{"sessions_parent"}, done.Indexes)
	after, err := fsck.Check(ctx, d2)
	require.NoError(t, err)
	assert.True(t, after.OK(), "%+v", after)
}

func TestCase3CountsComeFromTheReplay(t *testing.T) {
	// Ensures sessions/list and sessions/get count what sessions/resume
	// replays, whatever the change columns were edited to.
	path := lineageDB(t)
	damage(t, path, `UPDATE tool_calls SET status='completed' WHERE taskid IS NOT NULL`)
	d := testutil.MustOpenDBAt(t, path)
	c := testutil.StartDaemon(t, d).Dial(t)
	for _, id := range []string{sS, sN} {
		res, err := c.ResumeSession(ctx, id)
		require.NoError(t, err)
		got, err := c.GetSession(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, res.Session.Counts, got.Counts, id)
		list, _, err := c.ListSessions(ctx, tasksessiond.ListFilter{})
		require.NoError(t, err)
		for _, s := range list {
			if s.ID == id {
				assert.Equal(t, res.Session.Counts, s.Counts, id)
			}
		}
	}
	got, err := c.GetSession(ctx, sS)
	require.NoError(t, err)
	assert.Equal(t, tasksessiond.Counts{Total: 6, Pending: 4, InProgress: 1, Completed: 1}, got.Counts)
}

func TestCase4LineageColumns(t *testing.T) {
	// Ensures the lineage columns edited one at a time are reported by
	// fsck (with the statement that sets them back), and change nothing
	// the daemon does: exactly-once and the seal hold.
	t.Run("ParentCleared", func(t *testing.T) {
		// Ensures a callId the parent answered, retried at the successor
		// whose parent_id was cleared, gets the recorded answer and makes
		// no second task.
		path := lineageDB(t)
		damage(t, path, `UPDATE sessions SET parent_id=NULL WHERE id='N'`)
		d := testutil.MustOpenDBAt(t, path)
		r, err := fsck.Check(ctx, d)
		require.NoError(t, err)
		assert.Contains(t, problems(r)[sN], "session S names it as its successor, but its parent_id is empty (sqlite3: UPDATE sessions SET parent_id = 'S' WHERE id = 'N')")
		c := testutil.StartDaemon(t, d).Dial(t)
		res, err := c.CallTool(ctx, client.ToolCall{SessionID: sN, CallID: "c4", Name: tools.TaskCreate, Arguments: map[string]any{"subject": "d"}})
		require.NoError(t, err)
		w, err := res.Written()
		require.NoError(t, err)
		assert.Equal(t, 4, w.Task.Taskid, "the recorded answer")
		after, err := c.ResumeSession(ctx, sN)
		require.NoError(t, err)
		assert.Len(t, after.Tasks, 8)
		assert.Equal(t, 9, after.NextTaskid)
	})
	t.Run("Unsealed", func(t *testing.T) {
		// Ensures a compacted session set back to active with no successor
		// still refuses writes, pointing at its successor.
		path := lineageDB(t)
		damage(t, path, `UPDATE sessions SET status='active', successor_id=NULL WHERE id='S'`)
		d := testutil.MustOpenDBAt(t, path)
		r, err := fsck.Check(ctx, d)
		require.NoError(t, err)
		assert.Contains(t, problems(r)[sS], "session N was compacted from it, but its successor_id is empty (sqlite3: UPDATE sessions SET successor_id = 'N', status = 'compacted' WHERE id = 'S')")
		assert.Contains(t, problems(r)[sN], "its parent S names successor \"\", not it")
		c := testutil.StartDaemon(t, d).Dial(t)
		_, err = c.CallTool(ctx, client.ToolCall{SessionID: sS, Name: tools.TaskCreate, Arguments: map[string]any{"subject": "fork"}})
		var ce *client.Error
		require.True(t, errors.As(err, &ce), "%v", err)
		assert.Equal(t, wire.CodeSessionSealed, ce.Code)
		assert.Equal(t, sN, ce.SuccessorID())
		got, err := c.GetSession(ctx, sS)
		require.NoError(t, err)
		assert.Equal(t, tasksessiond.SessionCompacted, got.Status)
		assert.Equal(t, sN, got.HeadID)
	})
}

func TestCase5RepairNeverMakesThingsWorse(t *testing.T) {
	// Ensures repair rebuilds nothing from a replay that disagrees with
	// the log: a successor whose snapshot was changed or deleted, a row
	// whose arguments were forged; and fsck keeps saying so after it.
	for _, tc := range []struct {
		name, stmt, session, problem string
	}{
		{"NextTaskidRaised", `UPDATE snapshots SET next_taskid = next_taskid + 1000 WHERE session_id='N'`, sN,
			"its snapshot differs from its parent S's log replayed: the parent replays to 6 tasks (next #7), the snapshot holds 6 (next #1007)"},
		{"SnapshotDeleted", `DELETE FROM snapshots WHERE session_id='N'`, sN,
			"it was compacted from S but its snapshot (the tasks it started from) is gone: the daemon refuses to serve it"},
		{"ArgumentsForged", `UPDATE tool_calls SET arguments='{"subject":"forged"}' WHERE session_id='S' AND seq=2`, sS,
			"seq 2: its result told the model {Taskid:2 Status:pending Subject:b Description:}, its arguments replay to {Taskid:2 Status:pending Subject:forged Description:}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := lineageDB(t)
			// The change columns agree with the damage, as a repair on
			// main rewrote them: repair must not take that as a replay.
			damage(t, path, tc.stmt, `UPDATE tool_calls SET taskid = 99 WHERE session_id = '`+tc.session+`' AND seq = 3`)
			before := changeColumns(t, path)
			d := testutil.MustOpenDBAt(t, path)
			r, err := fsck.Check(ctx, d)
			require.NoError(t, err)
			assert.Contains(t, problems(r)[tc.session], tc.problem)
			assert.True(t, sessionOf(r, tc.session).LogDamaged)
			_, done, err := fsck.Repair(ctx, d)
			require.NoError(t, err)
			assert.Contains(t, done.Left, tc.session)
			assert.Equal(t, before, changeColumns(t, path), "nothing rebuilt from a damaged replay")
			after, err := fsck.Check(ctx, d)
			require.NoError(t, err)
			assert.False(t, after.OK(), "fsck does not call it clean")
			assert.GreaterOrEqual(t, after.Agree(), r.Agree())
		})
	}
	t.Run("DaemonRefusesASuccessorWithoutItsSnapshot", func(t *testing.T) {
		// Ensures a successor whose snapshot is gone is refused as damaged,
		// not served as a list cut short.
		path := lineageDB(t)
		damage(t, path, `DELETE FROM snapshots WHERE session_id='N'`)
		d := testutil.MustOpenDBAt(t, path)
		c := testutil.StartDaemon(t, d).Dial(t)
		_, err := c.ResumeSession(ctx, sN)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "the database is damaged")
		assert.Contains(t, err.Error(), "tasksessiond fsck says what is wrong")
		_, err = c.ResumeSession(ctx, sS)
		assert.NoError(t, err)
	})
}

func TestCase6SnapshotEditedInPlace(t *testing.T) {
	// Ensures a successor's snapshot edited in place is reported plainly at
	// the successor (not its parent), which the daemon refuses by name (its
	// chain starts from its snapshot), and repair rebuilds nothing of it.
	path := lineageDB(t)
	damage(t, path, `UPDATE snapshot_tasks SET subject='edited' WHERE session_id='N' AND taskid=5`)
	before := changeColumns(t, path)
	d := testutil.MustOpenDBAt(t, path)
	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.Empty(t, problems(r)[sS])
	assert.Contains(t, problems(r)[sN], "row 1 does not match its checksum, which covers the snapshot it started from")
	assert.Contains(t, problems(r)[sN], "its snapshot differs from its parent S's log replayed: the parent replays to 6 tasks (next #7), the snapshot holds 6 (next #7); task #5 differs (its snapshot rows were edited by hand?); repair changes nothing of it: restore a backup to go back")
	_, done, err := fsck.Repair(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, []string{sN}, done.Left)
	assert.Equal(t, before, changeColumns(t, path))
	c := testutil.StartDaemon(t, d).Dial(t)
	_, err = c.ResumeSession(ctx, sN)
	assert.ErrorContains(t, err, "session N: row 1 does not match its checksum")
}
