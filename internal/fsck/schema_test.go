package fsck_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/fsck"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/migrations"
)

// schemaAt makes a database at an older schema, with a session of two
// calls as that schema logged them.
func schemaAt(t *testing.T, version int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	raw := testutil.RawDB(t, path)
	_, err := raw.Exec(`PRAGMA journal_mode = WAL`)
	require.NoError(t, err)
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, migrations.FS)
	require.NoError(t, err)
	_, err = p.UpTo(ctx, version)
	require.NoError(t, err)
	_, err = raw.Exec(`
		INSERT INTO sessions (id, created_at, updated_at) VALUES ('old', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z');
		INSERT INTO tool_calls (session_id, seq, name, arguments, result, created_at, taskid, status, subject, description) VALUES
		('old', 1, 'TaskCreate', '{"subject":"t"}', '{"structuredContent":{"task":{"taskid":1,"status":"pending","subject":"t"}}}', '2026-01-01T00:00:01.000000Z', 1, 'pending', 't', ''),
		('old', 2, 'TaskUpdate', '{"taskid":1,"status":"completed"}', '{"structuredContent":{"task":{"taskid":1,"status":"completed","subject":"t"}}}', '2026-01-01T00:00:02.000000Z', 1, 'completed', NULL, NULL);`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	return path
}

func schemaOf(t *testing.T, path string) int64 {
	t.Helper()
	var v int64
	require.NoError(t, testutil.RawDB(t, path).QueryRow(`SELECT max(version_id) FROM goose_db_version WHERE is_applied`).Scan(&v))
	return v
}

func TestOlderSchemaIsNamedNotUpgraded(t *testing.T) {
	// Ensures fsck on a file at an older schema says which and what to do,
	// reports nothing an upgrade would change as damage, and that repair
	// refuses it rather than upgrade it (an upgrade is one-way).
	path := schemaAt(t, 10)
	d, err := db.OpenReadOnly(ctx, path)
	require.NoError(t, err)
	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	require.NoError(t, d.Close())
	assert.Contains(t, r.Schema, "schema 10: start the daemon once to upgrade it")
	assert.Equal(t, 1, r.Problems, "that alone: %+v", r)
	assert.Empty(t, r.Indexes)
	assert.Empty(t, r.Views)
	assert.Empty(t, r.Sessions)

	_, err = db.Open(ctx, path, db.Options{NoUpgrade: true})
	var old *db.OlderSchemaError
	require.True(t, errors.As(err, &old), "%v", err)
	assert.ErrorContains(t, err, "schema 10: start the daemon once to upgrade it")
	assert.Equal(t, int64(10), schemaOf(t, path), "left as it was")

	// The daemon's open upgrades it, and fsck then checks it.
	w := testutil.MustOpenDBAt(t, path)
	r, err = fsck.Check(ctx, w)
	require.NoError(t, err)
	assert.True(t, r.OK(), "%+v", r)
	assert.Equal(t, db.KnownSchema(), schemaOf(t, path))
}
