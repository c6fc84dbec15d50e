package fsck_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/fsck"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestLogAndHeadDeletedTogetherIsRefused(t *testing.T) {
	// Ensures a root session whose log rows and head are deleted together
	// (by hand, the daemon stopped) is refused by name after a restart,
	// for reads and writes, rather than served as an empty list; status
	// and the listing name it, fsck reports it with the statement that
	// would accept its log as it stands, and repair changes nothing of
	// it. Another session, and one that never had a call, are served.
	path := filepath.Join(t.TempDir(), "h.db")
	// Subtests, so that each daemon and its file are closed when they return.
	t.Run("write", func(t *testing.T) {
		dm := testutil.StartDaemon(t, testutil.MustOpenDBAt(t, path))
		c := dm.Dial(t)
		for _, id := range []string{"gone", "kept", "never"} {
			_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: id})
			require.NoError(t, err)
		}
		for _, id := range []string{"gone", "kept"} {
			for _, subject := range []string{"a", "b"} {
				_, err := c.CallTool(ctx, client.ToolCall{SessionID: id, Name: "TaskCreate", Arguments: map[string]any{"subject": subject}})
				require.NoError(t, err)
			}
		}
	})
	damage(t, path, `DELETE FROM tool_calls WHERE session_id = 'gone'`, `DELETE FROM log_heads WHERE session_id = 'gone'`)

	t.Run("restart", func(t *testing.T) {
		c := testutil.StartDaemon(t, testutil.MustOpenDBAt(t, path)).Dial(t)
		const why = "session gone: its head (the log_heads row every session has from its creation) is missing, and so is every row of its log"
		_, err := c.ResumeSession(ctx, "gone")
		var ce *client.Error
		require.True(t, errors.As(err, &ce), "served: %v", err)
		assert.Equal(t, wire.CodeSessionDamaged, ce.Code)
		assert.Contains(t, ce.Message, why)
		_, err = c.CallTool(ctx, client.ToolCall{SessionID: "gone", Name: "TaskCreate", Arguments: map[string]any{"subject": "c"}})
		require.True(t, errors.As(err, &ce), "written: %v", err)
		assert.Equal(t, wire.CodeSessionDamaged, ce.Code)
		for _, id := range []string{"kept", "never"} {
			_, err := c.ResumeSession(ctx, id)
			assert.NoError(t, err, id)
		}
		st, err := c.Status(ctx)
		require.NoError(t, err)
		require.Len(t, st.Refused, 1)
		assert.Equal(t, "gone", st.Refused[0].ID)
		list, _, err := c.ListSessions(ctx, tasksessiond.ListFilter{})
		require.NoError(t, err)
		for _, s := range list {
			assert.Equal(t, s.ID == "gone", s.Refused != "", "%s refused: %q", s.ID, s.Refused)
		}
	})

	d := testutil.MustOpenDBAt(t, path)
	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, 1, r.Problems, "%+v", r)
	gone := sessionOf(r, "gone")
	assert.True(t, gone.LogDamaged)
	require.Len(t, gone.Problems, 1)
	assert.Contains(t, gone.Problems[0], "its head (the log_heads row every session has from its creation) is missing")
	assert.Contains(t, gone.Problems[0], "repair cannot tell whether rows were lost")
	assert.Contains(t, gone.Problems[0], "INSERT INTO log_heads (session_id, seq, checksum) VALUES ('gone', 0, 0)")
	_, done, err := fsck.Repair(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, []string{"gone"}, done.Left)
	var heads int
	require.NoError(t, testutil.RawDB(t, path).QueryRow(`SELECT count(*) FROM log_heads WHERE session_id = 'gone'`).Scan(&heads))
	assert.Zero(t, heads, "repair records no head it cannot vouch for")
}

func TestMissingHeadAdviceMends(t *testing.T) {
	// Ensures the statement fsck names for a head deleted from a log that
	// is whole records the head the writer had written: run as it is
	// given, the session checks clean and loads with its tasks, as a
	// successor (chained to its snapshot) does too.
	path := lineageDB(t)
	before, err := db.OpenReadOnly(ctx, path)
	require.NoError(t, err)
	heads, err := before.LogHeads(ctx)
	require.NoError(t, err)
	require.NoError(t, before.Close())
	for _, id := range []string{sS, sN} {
		damage(t, path, `DELETE FROM log_heads WHERE session_id = '`+id+`'`)
	}
	d := testutil.MustOpenDBAt(t, path)
	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	require.NoError(t, d.Close())
	for _, id := range []string{sS, sN} {
		s := sessionOf(r, id)
		require.Len(t, s.Problems, 1, id)
		_, stmt, ok := strings.Cut(s.Problems[0], "(sqlite3: ")
		require.True(t, ok, s.Problems[0])
		stmt = strings.TrimSuffix(stmt, ")")
		damage(t, path, stmt)
	}
	d = testutil.MustOpenDBAt(t, path)
	after, err := d.LogHeads(ctx)
	require.NoError(t, err)
	assert.Equal(t, heads, after, "the heads the writer wrote")
	r, err = fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.True(t, r.OK(), "%+v", r)
}
