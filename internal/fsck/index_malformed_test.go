package fsck_test

import (
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/fsck"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

// breakIndexLeaf points the first cell pointer of the first leaf page of
// the index named name past the page.
func breakIndexLeaf(t *testing.T, path, name string) {
	t.Helper()
	const pageSize = 4096
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	leaves := leafPages(t, b, pageSize, rootPage(t, path, name))
	require.NotEmpty(t, leaves)
	page := (leaves[0] - 1) * pageSize
	require.Equal(t, byte(0x0a), b[page], "an index leaf")
	require.Positive(t, binary.BigEndian.Uint16(b[page+3:]), "cells in %s's leaf", name)
	b[page+8], b[page+9] = 0xff, 0xf0
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

func TestMalformedIndexPage(t *testing.T) {
	path := compactedSpreadDB(t, 40)
	t.Run("LogKeyRebuilt", func(t *testing.T) {
		// Ensures a malformed page of the log's key is named as such,
		// with its REINDEX, and repair, every log having checked,
		// rebuilds it from the table: fsck is clean after.
		p := t.TempDir() + "/t.db"
		copyFile(t, path, p)
		breakIndexLeaf(t, p, "sqlite_autoindex_tool_calls_1")
		r := check(t, p)
		require.False(t, r.OK())
		assert.Contains(t, strings.Join(r.Indexes, "\n"), "index sqlite_autoindex_tool_calls_1 is damaged")
		assert.Contains(t, strings.Join(r.Indexes, "\n"), "REINDEX sqlite_autoindex_tool_calls_1")
		for _, s := range r.Sessions {
			assert.False(t, s.LogDamaged, "%s: %q", s.ID, s.Problems)
		}
		d := testutil.MustOpenDBAt(t, p)
		_, done, err := fsck.Repair(ctx, d)
		require.NoError(t, err)
		assert.Empty(t, done.NoReindex)
		require.NoError(t, d.Close())
		after := check(t, p)
		assert.True(t, after.OK(), "%+v", after)
	})
	t.Run("SnapshotsKeyLeft", func(t *testing.T) {
		// Ensures a malformed page of snapshots' key, which loses a
		// successor's snapshot for the daemon, names the index and the
		// session (refused by the daemon by name), and repair, which
		// cannot check that session's log without its snapshot, does
		// not reindex, saying why.
		p := t.TempDir() + "/t.db"
		copyFile(t, path, p)
		breakIndexLeaf(t, p, "sqlite_autoindex_snapshots_1")
		r := check(t, p)
		require.False(t, r.OK())
		assert.Contains(t, strings.Join(r.Indexes, "\n"), "index sqlite_autoindex_snapshots_1 is damaged")
		assert.Contains(t, strings.Join(r.Indexes, "\n"), "repair does not rebuild it while the log of session sa2 does not check")
		for _, s := range r.Sessions {
			if s.ID != "sa2" {
				assert.Empty(t, s.Problems, s.ID)
				continue
			}
			require.Len(t, s.Problems, 1, "%q", s.Problems)
			assert.Contains(t, s.Problems[0], "the table's key does not find it")
		}
		d := testutil.MustOpenDBAt(t, p)
		c := testutil.StartDaemon(t, d).Dial(t)
		_, err := c.ResumeSession(ctx, "sa2")
		var ce *client.Error
		require.True(t, errors.As(err, &ce), "%v", err)
		assert.Equal(t, wire.CodeSessionDamaged, ce.Code, "%v", err)
		assert.Contains(t, ce.Message, "session sa2")
		_, err = c.ResumeSession(ctx, "sb2")
		assert.NoError(t, err)
		require.NoError(t, d.Close())

		d = testutil.MustOpenDBAt(t, p)
		_, done, err := fsck.Repair(ctx, d)
		require.NoError(t, err)
		assert.Contains(t, done.NoReindex, "sa2")
		require.NoError(t, d.Close())
	})
	t.Run("SessionsKey", func(t *testing.T) {
		// Ensures a malformed page of sessions' key does not stop fsck
		// ("read the sessions: database disk image is malformed"): the
		// sessions are read from the table, and those the key cannot
		// find are named.
		p := t.TempDir() + "/t.db"
		copyFile(t, path, p)
		breakIndexLeaf(t, p, "sqlite_autoindex_sessions_1")
		r := check(t, p)
		require.False(t, r.OK())
		require.Len(t, r.Sessions, 6)
		damaged := 0
		for _, s := range r.Sessions {
			if s.LogDamaged {
				damaged++
				assert.Contains(t, strings.Join(s.Problems, "\n"), "its record does not read")
			}
		}
		assert.Positive(t, damaged)
	})
}
