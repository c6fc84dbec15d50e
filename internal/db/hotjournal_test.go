package db_test

import (
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/db"
)

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.Create(to)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
}

// hotJournal leaves in dir a database file and the rollback journal of a
// transaction that never committed, as a power cut does before the
// journal's removal reached the disk; setup runs first, committed.
func hotJournal(t *testing.T, dir, setup, uncommitted string) string {
	t.Helper()
	live := filepath.Join(t.TempDir(), "t.db")
	conn, err := sql.Open("sqlite", live+"?_pragma=journal_mode(DELETE)")
	require.NoError(t, err)
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	_, err = conn.Exec(setup)
	require.NoError(t, err)
	tx, err := conn.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(uncommitted)
	require.NoError(t, err)
	path := filepath.Join(dir, "t.db")
	copyFile(t, live, path)
	copyFile(t, live+"-journal", path+"-journal")
	require.NoError(t, tx.Rollback())
	return path
}

func TestOpensAFileWithAHotJournal(t *testing.T) {
	// Ensures a new database whose first transaction was cut by a power
	// loss (its rollback journal left behind) opens, SQLite rolling the
	// journal back, rather than failing as a read-only database.
	// The transaction outgrows a cache of two pages, so SQLite writes
	// into the file before it commits: the file has a header, not yet
	// this daemon's, and the journal is hot.
	path := hotJournal(t, t.TempDir(), `PRAGMA cache_size = 2`, `CREATE TABLE half (x);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50) INSERT INTO half SELECT randomblob(3000) FROM n`)
	for _, p := range []string{path, path + "-journal"} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		require.NotZero(t, fi.Size(), p)
	}
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	defer d.Close()
	_, err = os.Stat(path + "-journal")
	assert.ErrorIs(t, err, os.ErrNotExist, "rolled back")
}
