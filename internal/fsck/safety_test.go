package fsck_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/fsck"
	"github.com/tasksessiond/tasksessiond/internal/replay"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

// flipInTable replaces old by new (as long) in the first page of table's
// b-tree, in the file itself: a byte flip on a record page, which no index
// sees. The file must have no WAL.
func flipInTable(t testing.TB, path, table string, old, new []byte) {
	t.Helper()
	var root int64
	require.NoError(t, testutil.RawDB(t, path).QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = ?`, table).Scan(&root))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	const pageSize = 4096
	page := b[(root-1)*pageSize : root*pageSize]
	i := bytes.Index(page, old)
	require.GreaterOrEqual(t, i, 0, "%q not in %s's page", old, table)
	copy(page[i:], new)
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

func TestRepairDoesNotReindexFromDamagedKeys(t *testing.T) {
	// Ensures a byte flipped in a snapshot's session_id on its record page
	// (the case 3: the index still finds the row, so the session
	// is served) is named, and repair does not rebuild the index from the
	// damaged key, which would leave the session without its snapshot.
	path := lineageDB(t)
	// The snapshot row of N: a record of header 03, text of one byte (0f),
	// an int8 (01); then "N" and next_taskid 7.
	flipInTable(t, path, "snapshots", []byte{0x03, 0x0f, 0x01, 'N', 0x07}, []byte{0x03, 0x0f, 0x01, 'O', 0x07})
	d := testutil.MustOpenDBAt(t, path)
	_, err := replay.Session(ctx, d, sN, replay.Options{})
	require.NoError(t, err, "served through the index, as before the flip")

	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.Contains(t, r.Strays, `snapshots: 1 rows of session "O", which does not exist`)
	_, done, err := fsck.Repair(ctx, d)
	require.NoError(t, err)
	assert.Contains(t, done.NoReindex, "tables hold rows of sessions that do not exist")
	l, err := replay.Session(ctx, d, sN, replay.Options{})
	require.NoError(t, err, "still served after repair")
	assert.Equal(t, 8, l.Store.Len())
}

func TestRepairNeverWritesNullOverAValue(t *testing.T) {
	// Ensures change columns set by hand on a row whose replay gives no
	// change (a read) are named and left: repair writes no NULL over a
	// value.
	path := lineageDB(t)
	damage(t, path, `UPDATE tool_calls SET taskid = 1, status = 'pending', subject = 'x' WHERE session_id = 'N' AND seq = 1`)
	before := changeColumns(t, path)
	d := testutil.MustOpenDBAt(t, path)
	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.Contains(t, problems(r)[sN], "repair leaves them as they are, as it writes no NULL over a value")
	_, done, err := fsck.Repair(ctx, d)
	require.NoError(t, err)
	assert.Zero(t, done.Rewrote)
	assert.Equal(t, before, changeColumns(t, path))
}
