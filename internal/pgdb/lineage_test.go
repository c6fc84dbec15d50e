package pgdb_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/pgtest"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

// lineageDB is a database holding session S (two tasks, callIds c1 and c2)
// compacted into N (one task more), written by a daemon that is gone.
func lineageDB(t *testing.T) string {
	t.Helper()
	url := pgtest.NewDB(t)
	d := startFleetDaemon(t, url, 0)
	c := testutil.DialSocket(t, d.Socket())
	_, err := c.CreateSession(context.Background(), wire.CreateSession{SessionID: "S"})
	require.NoError(t, err)
	for _, id := range []string{"c1", "c2"} {
		_, err := call(t, c, "S", "TaskCreate", `{"subject":"`+id+`"}`, id)
		require.NoError(t, err)
	}
	_, err = c.Compact(context.Background(), wire.Compact{SessionID: "S", NewSessionID: "N"})
	require.NoError(t, err)
	_, err = call(t, c, "N", "TaskCreate", `{"subject":"c3"}`, "c3")
	require.NoError(t, err)
	d.stop(t)
	return url
}

func TestLineageReadBothWays(t *testing.T) {
	// Ensures, as on SQLite, that one lineage column edited by hand
	// changes nothing the daemon does: exactly-once and the seal hold.
	ctx := context.Background()
	t.Run("ParentCleared", func(t *testing.T) {
		url := lineageDB(t)
		_, err := openDB(t, url, 0).SQL().ExecContext(ctx, `UPDATE sessions SET parent_id = NULL WHERE id = 'N'`)
		require.NoError(t, err)
		c := testutil.DialSocket(t, startFleetDaemon(t, url, 0).Socket())
		// A callId the parent answered, retried at the successor: the
		// recorded answer, no second task.
		raw, err := call(t, c, "N", "TaskCreate", `{"subject":"c2"}`, "c2")
		require.NoError(t, err)
		assert.Contains(t, string(raw), "#2 pending: c2")
		got, err := c.ResumeSession(ctx, "N")
		require.NoError(t, err)
		assert.Len(t, got.Tasks, 3)
		assert.Equal(t, 4, got.NextTaskid)
		s, err := c.GetSession(ctx, "N")
		require.NoError(t, err)
		assert.Equal(t, "S", s.ParentID)
	})
	t.Run("Unsealed", func(t *testing.T) {
		url := lineageDB(t)
		_, err := openDB(t, url, 0).SQL().ExecContext(ctx, `UPDATE sessions SET status = 'active', successor_id = NULL WHERE id = 'S'`)
		require.NoError(t, err)
		c := testutil.DialSocket(t, startFleetDaemon(t, url, 0).Socket())
		_, err = call(t, c, "S", "TaskCreate", `{"subject":"fork"}`, "")
		require.ErrorIs(t, err, client.ErrSessionSealed)
		s, err := c.GetSession(ctx, "S")
		require.NoError(t, err)
		assert.Equal(t, tasksessiond.SessionCompacted, s.Status)
		assert.Equal(t, "N", s.SuccessorID)
		assert.Equal(t, "N", s.HeadID)
		list, _, err := c.ListSessions(ctx, tasksessiond.ListFilter{Status: tasksessiond.SessionActive})
		require.NoError(t, err)
		for _, x := range list {
			assert.NotEqual(t, "S", x.ID, "listed as active")
		}
	})
}
