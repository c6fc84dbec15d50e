package fsck_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/fsck"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

func TestDroppedViewsAreMadeAgain(t *testing.T) {
	// Ensures views dropped or redefined by hand are named by fsck, and
	// that repair, which says it makes them again, does: from the
	// migrations' own definitions, after which fsck is clean and the
	// views read.
	path := lineageDB(t)
	damage(t, path, `DROP VIEW tasks`, `DROP VIEW open_tasks`,
		`DROP VIEW call_log`, `CREATE VIEW call_log AS SELECT 1 AS one`)
	d := testutil.MustOpenDBAt(t, path)
	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.Contains(t, r.Views, "view tasks is missing (tasksessiond fsck --repair creates it from the schema's definition)")
	assert.Contains(t, r.Views, "view open_tasks is missing (tasksessiond fsck --repair creates it from the schema's definition)")
	require.Len(t, r.Views, 3, "%q", r.Views)
	redefined := false
	for _, v := range r.Views {
		redefined = redefined || strings.HasPrefix(v, "view call_log is not as the schema defines it")
	}
	assert.True(t, redefined, "%q", r.Views)
	assert.False(t, r.OK())

	_, done, err := fsck.Repair(ctx, d)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"tasks", "open_tasks", "call_log"}, done.Views)
	after, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.True(t, after.OK(), "%+v", after)
	require.NoError(t, d.Close())

	raw := testutil.RawDB(t, path)
	var open, calls int
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM open_tasks`).Scan(&open))
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM call_log`).Scan(&calls))
	assert.Equal(t, 6, open, "N's open tasks, through the tasks view")
	assert.Equal(t, 12, calls)
}
