package pgdb_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/pgdb"
	"github.com/tasksessiond/tasksessiond/internal/pgtest"
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
