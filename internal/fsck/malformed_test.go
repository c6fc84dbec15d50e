package fsck_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/fsck"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// spreadDB makes sessions sa, sb and sc, each of n tasks whose
// descriptions name them ("sb-007"), logged one session after another,
// so that each session's rows fill pages of their own.
func spreadDB(t *testing.T, n int) string { return buildSpread(t, n, false) }

// buildSpread is spreadDB; with compact, each session is compacted into a
// successor (sa2, sb2, sc2) that creates one task more, so that the
// successors' snapshots fill pages of snapshot_tasks of their own.
func buildSpread(t *testing.T, n int, compact bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	d := testutil.MustOpenDBAt(t, path)
	m := session.NewManager(d, nil)
	for _, id := range []string{"sa", "sb", "sc"} {
		_, err := m.Create(ctx, wire.CreateSession{SessionID: id})
		require.NoError(t, err)
		for i := range n {
			args := fmt.Sprintf(`{"subject":"task %d","description":"%s-%03d %s"}`, i+1, id, i+1, strings.Repeat("x", 200))
			_, err := m.Call(ctx, wire.ToolCall{SessionID: id, Name: tools.TaskCreate, Arguments: []byte(args)})
			require.NoError(t, err)
		}
		if !compact {
			continue
		}
		_, err = m.Compact(ctx, wire.Compact{SessionID: id, NewSessionID: id + "2"})
		require.NoError(t, err)
		_, err = m.Call(ctx, wire.ToolCall{SessionID: id + "2", Name: tools.TaskCreate, Arguments: []byte(`{"subject":"after"}`)})
		require.NoError(t, err)
	}
	require.NoError(t, d.Close())
	return path
}

// breakCell makes the b-tree cell holding marker unreadable, as a torn
// write or a bad sector does: its payload size says far more than the
// page holds, so SQLite looks for an overflow page that is not there.
func breakCell(t *testing.T, path, marker string) {
	t.Helper()
	const pageSize = 4096
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	// The marker in a table's leaf page (0x0d), past the start of its
	// cells: a page's old bytes may hold it elsewhere too.
	at, page := -1, 0
	for from := 0; at < 0; {
		i := bytes.Index(b[from:], []byte(marker))
		require.GreaterOrEqual(t, i, 0, "marker %s in a leaf page of the file", marker)
		at, page = from+i, (from+i)/pageSize*pageSize
		if b[page] != 0x0d || at-page < int(binary.BigEndian.Uint16(b[page+5:])) {
			from, at = at+1, -1
		}
	}
	cells := int(binary.BigEndian.Uint16(b[page+3:]))
	start := 0
	for i := range cells {
		p := int(binary.BigEndian.Uint16(b[page+8+2*i:]))
		if page+p <= at && p > start {
			start = p
		}
	}
	require.Positive(t, start)
	cell := page + start
	// The payload size, a varint: every byte of it but the last has its
	// high bit set. Set them all to the most it can say in as many bytes.
	i := cell
	for b[i]&0x80 != 0 {
		b[i] = 0xff
		i++
	}
	b[i] = 0x7f
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

func TestFsckGoesOnPastAMalformedPage(t *testing.T) {
	// Ensures a corrupt b-tree cell in the log does not stop fsck: it
	// reports per session what it could read, names the session whose rows
	// it could not read, and which rows those are; repair changes nothing.
	for _, tc := range []struct {
		name, marker, session string
		seq                   int
	}{
		{"Middle", "sb-020 ", "sb", 20},
		{"FirstRow", "sa-001 ", "sa", 1},
		{"LastRow", "sc-040 ", "sc", 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := spreadDB(t, 40)
			breakCell(t, path, tc.marker)
			r := check(t, path)
			require.False(t, r.OK())
			require.Len(t, r.Sessions, 3)
			for _, s := range r.Sessions {
				if s.ID != tc.session {
					assert.Empty(t, s.Problems, "%s reads whole", s.ID)
					assert.Equal(t, 40, s.Rows)
					continue
				}
				assert.True(t, s.LogDamaged)
				assert.Equal(t, 39, s.Rows, "all but the broken row")
				require.Len(t, s.Problems, 1, "%q", s.Problems)
				assert.Contains(t, s.Problems[0], fmt.Sprintf("seq %d could not be read (database disk image is malformed (11)): 39 of its rows were read", tc.seq))
			}
			require.Len(t, r.Unreadable, 1)
			assert.Contains(t, r.Unreadable[0], "the log's key names them as rows of "+tc.session+";")

			// Repair changes nothing of it: a REINDEX would drop the lost
			// rows' keys, the last record of whose they were.
			before, err := os.ReadFile(path)
			require.NoError(t, err)
			d := testutil.MustOpenDBAt(t, path)
			_, _, err = fsck.Repair(ctx, d)
			assert.ErrorContains(t, err, "repair changes nothing of a file SQLite cannot read whole")
			require.NoError(t, d.Close())
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(before, after), "the file is as it was")
		})
	}
}

// breakLogRoot points the first cell pointer of the log's root page (a
// leaf: the log of chainsDB fits one page) past the page.
func breakLogRoot(t *testing.T, path string) {
	t.Helper()
	raw := testutil.RawDB(t, path)
	var root int
	require.NoError(t, raw.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = 'tool_calls'`).Scan(&root))
	require.NoError(t, raw.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	page := (root - 1) * 4096
	require.Equal(t, byte(0x0d), b[page], "the log fits its root page, a leaf")
	b[page+8], b[page+9] = 0xff, 0xf0 // its first cell "at" 65520
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

func TestMalformedLogPageBlocksNoOtherSession(t *testing.T) {
	// Ensures a malformed page of the log blocks neither the sessions
	// listing nor the sessions whose rows read: sessions/list failed for
	// every session with -32004 "storage is unavailable, retry once
	// writable" (its last activity is read from the log), and so did
	// sessions/get; now each session is served or refused by name
	// (-32007), and the listing shows the refused ones as refused.
	path := chainsDB(t)
	breakLogRoot(t, path)
	d := testutil.MustOpenDBAt(t, path)
	c := testutil.StartDaemon(t, d).Dial(t)
	list, _, err := c.ListSessions(ctx, tasksessiond.ListFilter{})
	require.NoError(t, err)
	require.Len(t, list, 6)
	refused := 0
	for _, s := range list {
		if s.Refused != "" {
			refused++
			assert.Contains(t, s.Refused, "session "+s.ID)
		}
	}
	assert.Positive(t, refused)
	served := 0
	for _, s := range list {
		_, err := c.GetSession(ctx, s.ID)
		if err == nil {
			served++
			continue
		}
		var ce *client.Error
		require.True(t, errors.As(err, &ce), "%s: %v", s.ID, err)
		assert.Equal(t, wire.CodeSessionDamaged, ce.Code, "%s: %v", s.ID, err)
	}
	assert.Positive(t, served, "the sessions whose rows read are served")
}

func TestFsckGoesOnPastAPageTheIntegrityCheckStopsAt(t *testing.T) {
	// Ensures a cell pointer of the log's root page pointing past the
	// page, at which SQLite's integrity check itself stops ("database
	// disk image is malformed") rather than listing what it found, is
	// reported as a finding, and fsck goes on to name, per session, what
	// it could not read; fsck stopped there with no report.
	path := chainsDB(t)
	breakLogRoot(t, path)

	r := check(t, path)
	require.False(t, r.OK())
	require.NotEmpty(t, r.Integrity)
	assert.Contains(t, r.Integrity[0], "integrity check stopped at a malformed page")
	var damaged []string
	for _, s := range r.Sessions {
		if s.LogDamaged {
			damaged = append(damaged, s.ID)
		}
	}
	assert.NotEmpty(t, damaged, "the sessions whose rows could not be read are named")

	// Repair makes nothing worse: no REINDEX from rows that did not read.
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	d := testutil.MustOpenDBAt(t, path)
	_, done, _ := fsck.Repair(ctx, d)
	require.NoError(t, d.Close())
	assert.NotEmpty(t, done.NoReindex)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(before, after), "the file is as it was")
}
