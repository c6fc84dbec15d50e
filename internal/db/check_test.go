package db_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

func TestIndexesAreTheSchemas(t *testing.T) {
	// Ensures db.Indexes, which fsck checks and repair creates from, is
	// exactly what the migrations create: a migration that changes an
	// index must change the list.
	path := filepath.Join(t.TempDir(), "i.db")
	d := testutil.MustOpenDBAt(t, path)
	rows, err := testutil.RawDB(t, path).Query(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name`)
	require.NoError(t, err)
	defer rows.Close()
	got := map[string]string{}
	for rows.Next() {
		var name, sql string
		require.NoError(t, rows.Scan(&name, &sql))
		got[name] = strings.Join(strings.Fields(sql), " ")
	}
	require.NoError(t, rows.Err())
	want := map[string]string{}
	for _, ix := range db.Indexes {
		want[ix.Name] = strings.Join(strings.Fields(ix.SQL), " ")
	}
	assert.Equal(t, want, got)
	problems, err := d.IndexProblems(ctx)
	require.NoError(t, err)
	assert.Empty(t, problems)
}
