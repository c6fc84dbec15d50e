package pgdb_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/pgtest"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

func TestFleetFencedErrorResultDropsSession(t *testing.T) {
	// Ensures that a write refused by the fence drops the session from
	// memory even when it changed nothing (an error result): the daemon
	// does not go on answering from its stale copy. Here the lease is lost
	// between renewals (expired by the database's clock) and taken over by
	// another daemon, which writes; this daemon's clock still trusts it.
	url := pgtest.NewDB(t)
	a := startFleetDaemon(t, url, time.Minute)
	b := startFleetDaemon(t, url, time.Minute)
	ca, cb := testutil.DialSocket(t, a.Socket()), testutil.DialSocket(t, b.Socket())
	ctx := context.Background()
	_, err := ca.CreateSession(ctx, client.CreateSession{SessionID: "e"})
	require.NoError(t, err)
	_, err = call(t, ca, "e", "TaskCreate", `{"subject":"a1"}`, "")
	require.NoError(t, err)
	raw := openDB(t, url, 0).SQL()
	_, err = raw.ExecContext(ctx, `UPDATE leases SET expires_at = clock_timestamp() - interval '1 second' WHERE session_id = 'e'`)
	require.NoError(t, err)
	_, err = call(t, cb, "e", "TaskCreate", `{"subject":"b2"}`, "")
	require.NoError(t, err)

	// An error result, fenced: refused, and the copy dropped.
	_, err = call(t, ca, "e", "TaskUpdate", `{"taskid":9,"status":"completed"}`, "")
	require.ErrorIs(t, err, client.ErrSessionLeased)
	st, err := ca.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, st.Sessions.Loaded, "the stale copy is dropped")
	raw2, err := call(t, ca, "e", "TaskList", `{}`, "")
	if err != nil {
		require.ErrorIs(t, err, client.ErrSessionLeased)
	} else {
		assert.Contains(t, string(raw2), "b2", "not the stale list")
	}
}

func TestFleetRenewalSkipsLockedRow(t *testing.T) {
	// Ensures one lease row held locked (a long or frozen transaction on
	// one session) does not hold up the renewal of this daemon's other
	// leases: they go on being renewed, and are not lost.
	url := pgtest.NewDB(t)
	const lease = 600 * time.Millisecond
	a := startFleetDaemon(t, url, lease)
	ca := testutil.DialSocket(t, a.Socket())
	ctx := context.Background()
	for _, id := range []string{"locked", "free"} {
		_, err := ca.CreateSession(ctx, client.CreateSession{SessionID: id})
		require.NoError(t, err)
		_, err = call(t, ca, id, "TaskCreate", `{"subject":"x"}`, "")
		require.NoError(t, err)
	}
	raw := openDB(t, url, 0).SQL()
	tx, err := raw.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `SELECT 1 FROM leases WHERE session_id = 'locked' FOR SHARE`)
	require.NoError(t, err)

	var first time.Time
	require.NoError(t, raw.QueryRowContext(ctx, `SELECT expires_at FROM leases WHERE session_id = 'free'`).Scan(&first))
	// Renewed three leases past where it stood: several renewals went by,
	// none held up by the locked row.
	require.Eventually(t, func() bool {
		var exp time.Time
		if err := raw.QueryRowContext(ctx, `SELECT expires_at FROM leases WHERE session_id = 'free'`).Scan(&exp); err != nil {
			return false
		}
		return exp.Sub(first) > 3*lease
	}, 20*time.Second, 20*time.Millisecond)
	raw2, err := call(t, ca, "free", "TaskList", `{}`, "")
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(raw2), "x"))
}
