package db_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

func TestForeignSchemaObjectsRefuseStart(t *testing.T) {
	// Ensures a trigger, a view or an index the schema does not define
	// (the trigger deleted each new row of a session after it was
	// acknowledged) stops the daemon from starting, with what it is and the
	// statement that drops it; dropped, the daemon starts.
	for _, tc := range []struct{ name, create, want, drop string }{
		{"trigger", `CREATE TRIGGER user_evil AFTER INSERT ON tool_calls WHEN new.session_id = 'sa' BEGIN DELETE FROM tool_calls WHERE rowid = new.rowid; END`,
			"trigger user_evil on tool_calls", `DROP TRIGGER "user_evil";`},
		{"index", `CREATE UNIQUE INDEX mine ON tool_calls (name)`, "index mine on tool_calls", `DROP INDEX "mine";`},
		{"view", `CREATE VIEW tasks_mine AS SELECT * FROM tool_calls`, "view tasks_mine on tasks_mine", `DROP VIEW "tasks_mine";`},
		// An index renamed to SQLite's own prefix with writable_schema: SQLite's
		// automatic indexes have no SQL; this one does, and it makes the
		// session's next writes fail.
		{"index named as SQLite's own", `CREATE UNIQUE INDEX mine ON tool_calls (session_id) WHERE seq >= 2;
			PRAGMA writable_schema = ON;
			UPDATE sqlite_master SET name = 'sqlite_autoindex_mine', sql = 'CREATE UNIQUE INDEX sqlite_autoindex_mine ON tool_calls (session_id) WHERE seq >= 2' WHERE name = 'mine';
			PRAGMA writable_schema = OFF;`,
			"index sqlite_autoindex_mine on tool_calls", `DROP INDEX "sqlite_autoindex_mine";`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.db")
			d := testutil.MustOpenDBAt(t, path)
			require.NoError(t, d.CreateSession(ctx, &tasksessiond.Session{ID: "sa"}))
			require.NoError(t, d.Close())
			raw := testutil.RawDB(t, path)
			_, err := raw.Exec(tc.create)
			require.NoError(t, err)
			require.NoError(t, raw.Close()) // its schema as of before a writable_schema edit

			_, err = db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
			require.Error(t, err)
			assert.ErrorContains(t, err, "holds schema objects tasksessiond does not define")
			assert.ErrorContains(t, err, tc.want)
			assert.ErrorContains(t, err, tc.drop)

			ro, err := db.OpenReadOnly(ctx, path)
			require.NoError(t, err)
			found, err := ro.ForeignObjects(ctx)
			require.NoError(t, err)
			require.Len(t, found, 1)
			assert.Equal(t, tc.drop, found[0].Drop())
			require.NoError(t, ro.Close())

			raw = testutil.RawDB(t, path)
			_, err = raw.Exec(tc.drop)
			require.NoError(t, err)
			require.NoError(t, raw.Close())
			d, err = db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
			require.NoError(t, err)
			require.NoError(t, d.Close())
		})
	}
}

func TestSchemaDefinesNoForeignObjects(t *testing.T) {
	// Ensures the schema's own views and indexes are known as its own: a
	// migrated database has no foreign object.
	d := testutil.MustOpenDB(t)
	found, err := d.ForeignObjects(ctx)
	require.NoError(t, err)
	assert.Empty(t, found)
}
