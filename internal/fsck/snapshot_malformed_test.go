package fsck_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/fsck"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

// compactedSpreadDB makes spreadDB's sessions, each compacted into a
// successor whose snapshot fills pages of snapshot_tasks of its own.
func compactedSpreadDB(t *testing.T, n int) string { return buildSpread(t, n, true) }

// breakCellIn makes the cell holding marker in a leaf page of table's
// b-tree unreadable: with pointer, its cell pointer points past the page
// (which stops a scan of the page, as in breakLogRoot); else its payload
// size says far more than the page holds, as breakCell does in the log's.
func breakCellIn(t *testing.T, path, table, marker string, pointer bool) {
	t.Helper()
	const pageSize = 4096
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	at, page := -1, 0
	for _, p := range leafPages(t, b, pageSize, rootPage(t, path, table)) {
		page = (p - 1) * pageSize
		i := bytes.Index(b[page:page+pageSize], []byte(marker))
		if i >= int(binary.BigEndian.Uint16(b[page+5:])) {
			at = page + i
			break
		}
	}
	require.GreaterOrEqual(t, at, 0, "marker %s in a leaf page of %s", marker, table)
	cells := int(binary.BigEndian.Uint16(b[page+3:]))
	start, ptr := 0, 0
	for i := range cells {
		p := int(binary.BigEndian.Uint16(b[page+8+2*i:]))
		if page+p <= at && p > start {
			start, ptr = p, page+8+2*i
		}
	}
	require.Positive(t, start)
	if pointer {
		b[ptr], b[ptr+1] = 0xff, 0xf0 // the cell "at" 65520
	} else {
		i := page + start
		for b[i]&0x80 != 0 {
			b[i] = 0xff
			i++
		}
		b[i] = 0x7f
	}
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

func TestFsckGoesOnPastAMalformedSnapshotPage(t *testing.T) {
	// Ensures a corrupt cell in a snapshot's tables does not stop fsck:
	// it names the table and the session whose snapshot could not be
	// read, as damaged, reports every other session as it is, and the
	// daemon refuses that session by name and serves the rest; repair
	// changes nothing, saying why. fsck stopped at "read snapshot_tasks:
	// database disk image is malformed" or "read snapshots: ...".
	for _, tc := range []struct {
		name, table, marker string
		pointer             bool
	}{
		{"TasksPayload", "snapshot_tasks", "sb-020 ", false},
		{"TasksPointer", "snapshot_tasks", "sb-020 ", true},
		{"SnapshotsPayload", "snapshots", "sb2", false},
		{"SnapshotsPointer", "snapshots", "sb2", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := compactedSpreadDB(t, 40)
			breakCellIn(t, path, tc.table, tc.marker, tc.pointer)

			r := check(t, path)
			require.False(t, r.OK())
			require.Len(t, r.Sessions, 6)
			var damaged []string
			for _, s := range r.Sessions {
				if s.LogDamaged {
					damaged = append(damaged, s.ID)
					require.Len(t, s.Problems, 1, "%q", s.Problems)
					assert.Contains(t, s.Problems[0], "its snapshot does not read: snapshot of "+s.ID+": read "+tc.table+": database disk image is malformed (11): the tasks it started from are lost")
					continue
				}
				assert.Empty(t, s.Problems, "%s reads whole", s.ID)
			}
			assert.Contains(t, damaged, "sb2")
			assert.NotContains(t, damaged, "sa", "a session without a snapshot reads")
			require.NotEmpty(t, r.Unreadable, "%+v", r)
			assert.Contains(t, r.Unreadable[0], tc.table+" could not be read whole")
			assert.Contains(t, r.Unreadable[0], "sb2")

			// The daemon refuses the damaged sessions by name and serves
			// the rest.
			d := testutil.MustOpenDBAt(t, path)
			c := testutil.StartDaemon(t, d).Dial(t)
			for _, s := range r.Sessions {
				_, err := c.ResumeSession(ctx, s.ID)
				if !slices.Contains(damaged, s.ID) {
					assert.NoError(t, err, s.ID)
					continue
				}
				var ce *client.Error
				require.True(t, errors.As(err, &ce), "%s: %v", s.ID, err)
				assert.Equal(t, wire.CodeSessionDamaged, ce.Code, "%v", err)
				assert.Contains(t, ce.Message, "session "+s.ID)
			}
			require.NoError(t, d.Close())

			// Repair changes nothing of the file, and says why.
			before, err := os.ReadFile(path)
			require.NoError(t, err)
			d = testutil.MustOpenDBAt(t, path)
			_, _, err = fsck.Repair(ctx, d)
			assert.ErrorContains(t, err, "repair changes nothing of a file SQLite cannot read whole")
			assert.ErrorContains(t, err, "sb2")
			require.NoError(t, d.Close())
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(before, after), "the file is as it was")
		})
	}
}
