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
	"github.com/tasksessiond/tasksessiond/internal/pgdb"
	"github.com/tasksessiond/tasksessiond/internal/pgtest"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestMigrationSnapshotTasks(t *testing.T) {
	// Ensures schema 2 moves the first tasks of the successors made under
	// schema 1 (one JSON document each) into snapshot_tasks, so that the
	// tasks view and the counts read them as before, session by session;
	// and that schema 3 keeps them there only (the JSON document goes, its
	// next taskid a column), the daemon loading a successor from the same
	// rows the view reads, and its down migration gives the document back.
	url := pgtest.NewDB(t)
	ctx := context.Background()
	raw, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer raw.Close()
	p, err := pgdb.Migrations(raw)
	require.NoError(t, err)
	_, err = p.UpTo(ctx, 1)
	require.NoError(t, err)
	now := time.Now()
	for _, q := range []string{
		`INSERT INTO sessions (id, status, created_at, updated_at) VALUES ('old', 'compacted', $1, $1)`,
		`INSERT INTO sessions (id, parent_id, created_at, updated_at) VALUES ('new', 'old', $1, $1)`,
		`INSERT INTO sessions (id, parent_id, created_at, updated_at) VALUES ('empty', 'old', $1, $1)`,
	} {
		_, err := raw.ExecContext(ctx, q, now)
		require.NoError(t, err)
	}
	_, err = raw.ExecContext(ctx, `INSERT INTO snapshots VALUES ('new', '{"tasks":[{"taskid":1,"status":"completed","subject":"a","description":"da"},{"taskid":2,"status":"pending","subject":"b","description":""}],"nextTaskid":3}'), ('empty', '{"tasks":null,"nextTaskid":1}')`)
	require.NoError(t, err)

	d := openDB(t, url, 0) // migrates to the newest schema
	tasks, err := d.Tasks(ctx, "new")
	require.NoError(t, err)
	assert.Equal(t, []tasksessiond.Task{{Taskid: 1, Status: tasksessiond.Completed, Subject: "a", Description: "da"}, {Taskid: 2, Status: tasksessiond.Pending, Subject: "b"}}, tasks)
	counts, err := d.TaskCountsOf(ctx, []string{"new", "empty", "old"})
	require.NoError(t, err)
	assert.Equal(t, tasksessiond.Counts{Total: 2, Pending: 1, Completed: 1}, counts["new"])
	assert.Zero(t, counts["empty"].Total)

	loaded, err := d.LoadSession(ctx, "new")
	require.NoError(t, err)
	assert.Equal(t, &tasksessiond.Snapshot{Tasks: tasks, NextTaskid: 3}, loaded.Snapshot)
	loaded, err = d.LoadSession(ctx, "empty")
	require.NoError(t, err)
	assert.Equal(t, &tasksessiond.Snapshot{NextTaskid: 1}, loaded.Snapshot)
	loaded, err = d.LoadSession(ctx, "old")
	require.NoError(t, err)
	assert.Nil(t, loaded.Snapshot, "a session that started empty has no snapshot")

	_, err = p.DownTo(ctx, 2)
	require.NoError(t, err)
	var doc string
	require.NoError(t, raw.QueryRowContext(ctx, `SELECT snapshot FROM snapshots WHERE session_id = 'new'`).Scan(&doc))
	assert.JSONEq(t, `{"tasks":[{"taskid":1,"status":"completed","subject":"a","description":"da"},{"taskid":2,"status":"pending","subject":"b","description":""}],"nextTaskid":3}`, doc)
}

func TestRefusesANewerSchema(t *testing.T) {
	// Ensures a database a newer daemon migrated past this binary's
	// migrations is refused at Open, naming both schemas and what to do,
	// and is left as it is: no version row, lease, session or table more.
	url := pgtest.NewDB(t)
	ctx := context.Background()
	d := openDB(t, url, 0)
	require.NoError(t, d.Close())
	raw, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer raw.Close()
	next := migrateNewer(t, raw)
	state := func() string {
		var s string
		require.NoError(t, raw.QueryRowContext(ctx, `SELECT concat_ws(' | ',
			(SELECT string_agg(id || ':' || version_id || ':' || is_applied, ',' ORDER BY id) FROM goose_db_version),
			(SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables WHERE table_schema = 'public'),
			(SELECT count(*) FROM leases), (SELECT count(*) FROM sessions))`).Scan(&s))
		return s
	}
	before := state()

	d, err = pgdb.Open(ctx, url, pgdb.Options{})
	if d != nil {
		d.Close()
	}
	var newer *pgdb.NewerSchemaError
	require.ErrorAs(t, err, &newer)
	assert.Equal(t, pgdb.NewerSchemaError{Schema: next, Known: next - 1}, *newer)
	assert.ErrorContains(t, err, fmt.Sprintf("the database is schema %d, this binary knows up to %d", next, next-1))
	assert.ErrorContains(t, err, "upgrade this daemon to the fleet's version")
	assert.Equal(t, before, state(), "left as it is")
}

// migrateNewer records in goose's table, as a newer binary's migration
// would, the schema after the newest this binary knows, and returns it.
func migrateNewer(t *testing.T, raw *sql.DB) int64 {
	t.Helper()
	p, err := pgdb.Migrations(raw)
	require.NoError(t, err)
	sources := p.ListSources()
	next := sources[len(sources)-1].Version + 1
	_, err = raw.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)`, next)
	require.NoError(t, err)
	return next
}

func TestANewerMigrationUnderARunningDaemon(t *testing.T) {
	ctx := context.Background()
	row := func(id string, seq, prev int64) tasksessiond.Append {
		return tasksessiond.Append{Call: tasksessiond.Call{SessionID: id, Seq: seq, Name: "TaskList", Arguments: []byte(`{}`), Result: []byte(`{}`)}, Prev: prev}
	}
	t.Run("WritesNothing", func(t *testing.T) {
		// Ensures a daemon already running when a newer one migrates the
		// database writes nothing more: an append, a batch and a new
		// session are each refused by their own statement, naming both
		// schemas, with no row written; no lease is taken after; and
		// daemon/status says why.
		url := pgtest.NewDB(t)
		d := openDB(t, url, time.Minute)
		raw, err := sql.Open("pgx", url)
		require.NoError(t, err)
		defer raw.Close()
		for _, id := range []string{"s", "b"} {
			require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: id}))
			require.NoError(t, d.Acquire(ctx, id))
		}
		first := []tasksessiond.Append{row("s", 1, 0)}
		require.NoError(t, d.AppendCalls(ctx, first))
		assert.Empty(t, d.Problem())
		state := func() string {
			var s string
			require.NoError(t, raw.QueryRowContext(ctx, `SELECT concat_ws(' | ',
				(SELECT string_agg(session_id || ':' || seq, ',' ORDER BY session_id, seq) FROM tool_calls),
				(SELECT string_agg(session_id || ':' || seq || ':' || checksum, ',' ORDER BY session_id) FROM log_heads),
				(SELECT string_agg(id, ',' ORDER BY id) FROM sessions))`).Scan(&s))
			return s
		}
		next := migrateNewer(t, raw)
		before := state()
		want := fmt.Sprintf("the database is schema %d, this binary knows up to %d: a newer tasksessiond migrated it; upgrade this daemon to the fleet's version", next, next-1)

		var newer *pgdb.NewerSchemaError
		err = d.AppendCalls(ctx, []tasksessiond.Append{row("s", 2, first[0].Call.Checksum)})
		require.ErrorAs(t, err, &newer, "an append")
		assert.ErrorContains(t, err, want)
		err = d.AppendCalls(ctx, []tasksessiond.Append{row("b", 1, 0), row("b", 2, 0)})
		assert.ErrorAs(t, err, &newer, "a batch")
		err = d.CreateSession(ctx, &tasksessiond.Session{ID: "n"})
		assert.ErrorAs(t, err, &newer, "a new session")
		err = d.Acquire(ctx, "s")
		assert.ErrorAs(t, err, &newer, "a lease")
		assert.Equal(t, before, state(), "nothing written")
		assert.Contains(t, d.Problem(), want)
	})
	t.Run("ClientsAreToldWhy", func(t *testing.T) {
		// Ensures a client of such a daemon gets -32004 saying which schema
		// the database is, which the daemon knows, and to send the call to
		// a daemon of the fleet's version: for a call that writes, and for
		// the next, the session being given up (it is not loaded again).
		url := pgtest.NewDB(t)
		c := testutil.DialSocket(t, startFleetDaemon(t, url, time.Minute).Socket())
		newSessionWith(t, c, "w", "a")
		raw, err := sql.Open("pgx", url)
		require.NoError(t, err)
		defer raw.Close()
		next := migrateNewer(t, raw)
		want := fmt.Sprintf("the database is schema %d, this binary knows up to %d", next, next-1)
		for _, a := range []struct{ tool, args string }{{"TaskCreate", `{"subject":"b"}`}, {"TaskUpdate", `{"taskid":1,"status":"completed"}`}} {
			tool := a.tool
			_, err = call(t, c, "w", tool, a.args, "")
			var ce *client.Error
			require.True(t, errors.As(err, &ce), "%s: %v", tool, err)
			assert.Equal(t, wire.CodeStorageUnavailable, ce.Code, tool)
			assert.Contains(t, ce.Message, want, tool)
			assert.Contains(t, ce.Message, "nothing was changed: send the call to a daemon of the fleet's version", tool)
		}
		// A read is answered from the database, as at a daemon that does
		// not hold the session, and logs nothing.
		_, err = call(t, c, "w", "TaskList", `{}`, "")
		require.NoError(t, err)
		var n int
		require.NoError(t, raw.QueryRowContext(ctx, `SELECT count(*) FROM tool_calls`).Scan(&n))
		assert.Equal(t, 1, n, "nothing written")
	})
	t.Run("GivesUpItsSessions", func(t *testing.T) {
		// Ensures the renewer of a daemon that writes nothing notices a
		// newer daemon's migration within a lease, gives up the leases it
		// holds (another daemon may serve those sessions at once) and
		// tells the manager it lost them.
		url := pgtest.NewDB(t)
		d := openDB(t, url, 600*time.Millisecond)
		lost := make(chan string, 1)
		d.OnLost(func(id string) { lost <- id })
		raw, err := sql.Open("pgx", url)
		require.NoError(t, err)
		defer raw.Close()
		require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: "r"}))
		require.NoError(t, d.Acquire(ctx, "r"))
		migrateNewer(t, raw)
		select {
		case id := <-lost:
			assert.Equal(t, "r", id)
		case <-time.After(5 * time.Second):
			t.Fatal("the lease was not given up")
		}
		var n int
		require.NoError(t, raw.QueryRowContext(ctx, `SELECT count(*) FROM leases`).Scan(&n))
		assert.Zero(t, n, "given up, not left to expire")
		assert.Zero(t, d.Held())
		assert.Contains(t, d.Problem(), "upgrade this daemon to the fleet's version")
	})
}
