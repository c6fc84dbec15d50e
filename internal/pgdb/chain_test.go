package pgdb_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/pgtest"
	"github.com/tasksessiond/tasksessiond/internal/replay"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestFleetRefusesADamagedLogByName(t *testing.T) {
	// Ensures fleet mode checks a session's log as SQLite does: a root
	// session whose rows and head are deleted together, a row edited, the
	// last row deleted, a successor's snapshot edited: each is refused by
	// name (-32007, saying what broke) by a daemon that loads it after the
	// damage, for reads and writes, never served as another list; the
	// sessions left alone, and one that never had a call, are served.
	ctx := context.Background()
	url := pgtest.NewDB(t)
	first := startFleetDaemon(t, url, 0)
	c := testutil.DialSocket(t, first.Socket())
	for _, id := range []string{"gone", "edited", "cut", "kept", "never", "old"} {
		_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: id})
		require.NoError(t, err)
	}
	for _, id := range []string{"gone", "edited", "cut", "kept", "old"} {
		for _, subject := range []string{"a", "b"} {
			_, err := call(t, c, id, "TaskCreate", `{"subject":"`+subject+`"}`, "")
			require.NoError(t, err)
		}
	}
	_, err := c.Compact(ctx, wire.Compact{SessionID: "old", NewSessionID: "succ"})
	require.NoError(t, err)
	served := map[string]string{}
	for _, id := range []string{"kept", "never", "succ"} {
		r, err := c.ResumeSession(ctx, id)
		require.NoError(t, err)
		served[id] = fmt.Sprintf("%+v next %d", r.Tasks, r.NextTaskid)
	}
	first.stop(t)

	raw, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer raw.Close()
	for _, q := range []string{
		`DELETE FROM leases`,
		`DELETE FROM tool_calls WHERE session_id = 'gone'`,
		`DELETE FROM log_heads WHERE session_id = 'gone'`,
		`UPDATE tool_calls SET arguments = '{"subject":"z"}' WHERE session_id = 'edited' AND seq = 2`,
		`DELETE FROM tool_calls WHERE session_id = 'cut' AND seq = 2`,
		`UPDATE snapshot_tasks SET subject = 'x' WHERE session_id = 'succ' AND taskid = 1`,
	} {
		_, err := raw.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}

	c = testutil.DialSocket(t, startFleetDaemon(t, url, 0).Socket())
	for id, want := range map[string]string{
		"gone":   "session gone: its head (the log_heads row every session has from its creation) is missing, and so is every row of its log",
		"edited": "session edited: row 2 does not match its checksum",
		"cut":    "session cut: row 2 is missing from the end of its log",
		"succ":   "session succ: row 1 does not match its checksum, which covers the snapshot it started from",
	} {
		_, err := c.ResumeSession(ctx, id)
		var ce *client.Error
		require.True(t, errors.As(err, &ce), "%s served: %v", id, err)
		assert.Equal(t, wire.CodeSessionDamaged, ce.Code, id)
		assert.Contains(t, ce.Message, want)
		_, err = call(t, c, id, "TaskCreate", `{"subject":"c"}`, "")
		require.True(t, errors.As(err, &ce), "%s written: %v", id, err)
		assert.Equal(t, wire.CodeSessionDamaged, ce.Code, id)
	}
	for _, id := range []string{"kept", "never"} {
		r, err := c.ResumeSession(ctx, id)
		require.NoError(t, err, id)
		assert.Equal(t, served[id], fmt.Sprintf("%+v next %d", r.Tasks, r.NextTaskid), id)
	}
}

func TestMigrationChainsTheLog(t *testing.T) {
	// Ensures schema 6 chains the rows logged before the chain as the
	// writer does, and gives each session its head: a session with rows
	// that of its last row, a root session without rows its seq-0 head;
	// a session whose seqs have a gap is chained up to it and refused.
	ctx := context.Background()
	url := pgtest.NewDB(t)
	d := openDB(t, url, time.Minute)
	for _, id := range []string{"logged", "never", "gap"} {
		require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: id}))
		require.NoError(t, d.Acquire(ctx, id))
	}
	var prev int64
	for seq := int64(1); seq <= 3; seq++ {
		for _, id := range []string{"logged", "gap"} {
			a := []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: id, Seq: seq, Name: "TaskCreate", Arguments: []byte(`{"subject":"a"}`),
				Result: []byte(`{}`)}, Task: &tasksessiond.Task{Taskid: int(seq), Status: tasksessiond.Pending, Subject: "a"}, SetSubject: true}}
			require.NoError(t, d.AppendCalls(ctx, a))
			if id == "logged" {
				prev = a[0].Call.Checksum
			}
		}
	}
	require.NoError(t, d.Close())
	raw, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer raw.Close()
	// Back to schema 5, as a daemon before the chain left it: no
	// checksums, no heads; and a row of "gap" gone.
	_, err = raw.ExecContext(ctx, `DELETE FROM leases; DELETE FROM log_heads; UPDATE tool_calls SET checksum = NULL;
		DELETE FROM tool_calls WHERE session_id = 'gap' AND seq = 2; DELETE FROM goose_db_version WHERE version_id = 6`)
	require.NoError(t, err)

	d = openDB(t, url, time.Minute)
	heads := map[string][2]int64{}
	rows, err := raw.QueryContext(ctx, `SELECT session_id, seq, checksum FROM log_heads`)
	require.NoError(t, err)
	for rows.Next() {
		var id string
		var h [2]int64
		require.NoError(t, rows.Scan(&id, &h[0], &h[1]))
		heads[id] = h
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, map[string][2]int64{"logged": {3, prev}, "never": {0, 0}, "gap": {1, heads["gap"][1]}}, heads, "chained as the writer chained")
	for _, id := range []string{"logged", "never"} {
		_, err := replay.Session(ctx, d, id, replay.Options{})
		assert.NoError(t, err, id)
	}
	_, err = replay.Session(ctx, d, "gap", replay.Options{})
	assert.ErrorIs(t, err, tasksessiond.ErrDamaged)
	assert.ErrorContains(t, err, "session gap: row 2 is missing from its log")
}

func TestBatchChainsAndMovesTheHead(t *testing.T) {
	// Ensures a batch of appends (a transcript replayed into a new
	// session) chains its rows as single appends do and leaves the head at
	// its last row, which the next append and a load check; a batch whose
	// first row is not the one after the head writes nothing.
	ctx := context.Background()
	d := openDB(t, pgtest.NewDB(t), time.Minute)
	require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: "b"}))
	require.NoError(t, d.Acquire(ctx, "b"))
	row := func(seq int64) tasksessiond.Append {
		return tasksessiond.Append{Call: tasksessiond.Call{SessionID: "b", Seq: seq, Name: "TaskCreate", Arguments: []byte(`{"subject":"a"}`),
			Result: []byte(`{}`)}, Task: &tasksessiond.Task{Taskid: int(seq), Status: tasksessiond.Pending, Subject: "a"}, SetSubject: true}
	}
	batch := []tasksessiond.Append{row(1), row(2), row(3)}
	require.NoError(t, d.AppendCalls(ctx, batch))
	next := []tasksessiond.Append{row(4)}
	next[0].Prev = batch[2].Call.Checksum
	require.NoError(t, d.AppendCalls(ctx, next))
	l, err := replay.Session(ctx, d, "b", replay.Options{})
	require.NoError(t, err)
	assert.Equal(t, &tasksessiond.LogHead{Seq: 4, Checksum: next[0].Call.Checksum}, l.Session.Log)

	late := []tasksessiond.Append{row(7), row(8)}
	late[0].Prev = next[0].Call.Checksum
	err = d.AppendCalls(ctx, late)
	assert.ErrorIs(t, err, tasksessiond.ErrDamaged)
	assert.ErrorContains(t, err, "its head is at seq 4, not at the row before the one being logged")
	again := []tasksessiond.Append{row(4), row(5)}
	assert.ErrorIs(t, d.AppendCalls(ctx, again), tasksessiond.ErrExists)
	calls, err := d.Calls(ctx, "b")
	require.NoError(t, err)
	assert.Len(t, calls, 4, "nothing written by either")
}

func TestEditsUnderARunningDaemonAreRefused(t *testing.T) {
	// Ensures what a running daemon's memory cannot see is still caught:
	// an append after the session's head was deleted, or moved, is
	// refused as damage (nothing written), and a logged row edited is
	// refused when a retry reads it back (CallBySeq).
	ctx := context.Background()
	url := pgtest.NewDB(t)
	d := openDB(t, url, time.Minute)
	raw, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer raw.Close()
	for _, id := range []string{"h", "m", "e"} {
		require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: id}))
		require.NoError(t, d.Acquire(ctx, id))
	}
	first := map[string]int64{}
	for _, id := range []string{"h", "m", "e"} {
		a := []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: id, Seq: 1, Name: "TaskList", Arguments: []byte(`{}`), Result: []byte(`{}`)}}}
		require.NoError(t, d.AppendCalls(ctx, a))
		first[id] = a[0].Call.Checksum
	}
	_, err = raw.ExecContext(ctx, `DELETE FROM log_heads WHERE session_id = 'h'; UPDATE log_heads SET seq = 0, checksum = 0 WHERE session_id = 'm';
		UPDATE tool_calls SET arguments = '{"x":1}' WHERE session_id = 'e'`)
	require.NoError(t, err)
	for id, want := range map[string]string{
		"h": "session h: its head (the log_heads row every session has from its creation) is missing",
		"m": "session m: its head is at seq 0, not at the row before the one being logged",
	} {
		a := []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: id, Seq: 2, Name: "TaskList", Arguments: []byte(`{}`), Result: []byte(`{}`)}, Prev: first[id]}}
		err := d.AppendCalls(ctx, a)
		assert.ErrorIs(t, err, tasksessiond.ErrDamaged, id)
		assert.ErrorContains(t, err, want)
		var n int
		require.NoError(t, raw.QueryRowContext(ctx, `SELECT count(*) FROM tool_calls WHERE session_id = $1`, id).Scan(&n))
		assert.Equal(t, 1, n, "%s: nothing written", id)
	}
	_, err = d.CallBySeq(ctx, "e", 1)
	assert.ErrorIs(t, err, tasksessiond.ErrDamaged)
	assert.ErrorContains(t, err, "session e: row 1 does not match its checksum")
	c, err := d.CallBySeq(ctx, "m", 1)
	require.NoError(t, err, "a row as logged reads back")
	assert.Equal(t, first["m"], c.Checksum)
}
