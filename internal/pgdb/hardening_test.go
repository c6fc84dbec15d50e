package pgdb_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/compact"
	"github.com/tasksessiond/tasksessiond/internal/pgdb"
	"github.com/tasksessiond/tasksessiond/internal/pgtest"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestFleetFencedErrorResultDropsSession(t *testing.T) {
	// Ensures that a write refused by the fence drops the session from
	// memory even when it changed nothing (an error result): the daemon
	// does not go on answering from its stale copy. Here the lease is lost
	// between renewals (expired by the database's clock) and taken over by
	// another daemon, which writes; this daemon's clock still trusts it.
	url, _, _, ca, cb := twoDaemons(t)
	ctx := context.Background()
	newSessionWith(t, ca, "e", "a1")
	raw := openDB(t, url, 0).SQL()
	_, err := raw.ExecContext(ctx, `UPDATE leases SET expires_at = clock_timestamp() - interval '1 second' WHERE session_id = 'e'`)
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
		newSessionWith(t, ca, id, "x")
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

func TestFleetConnectionsBounded(t *testing.T) {
	// Ensures the daemon's connections carry the bounds derived from the
	// lease (pgdb.Settings), and that a connection string's own value wins.
	url := pgtest.NewDB(t)
	const lease = 600 * time.Millisecond
	a := openDB(t, url+"&lock_timeout=123", lease)
	want := pgdb.Settings(lease)
	want["lock_timeout"] = "123"
	for k, v := range want {
		var got string
		require.NoError(t, a.SQL().QueryRowContext(context.Background(), "SHOW "+k).Scan(&got))
		if strings.HasPrefix(k, "tcp_") || k == "jit" {
			continue // 0 on a Unix socket, where they do not apply
		}
		n, unit := strings.TrimRight(got, "ms"), strings.TrimLeft(got, "0123456789")
		if unit == "s" {
			n += "000"
		}
		assert.Equal(t, v, n, "%s = %s", k, got)
	}
}

func TestFleetFrozenHolderTransactionBounded(t *testing.T) {
	// Ensures a holder frozen inside a transaction that locks its lease row
	// (as a compaction does) delays another daemon's takeover by about a
	// lease, not for as long as it stays frozen: with the settings the
	// daemon gives its connections, the server ends the idle transaction,
	// and the waiting Acquire is itself bounded and retried.
	url := pgtest.NewDB(t)
	const lease = 600 * time.Millisecond
	ctx := context.Background()
	b := openDB(t, url, lease)
	s := tasksessiond.Session{ID: "frozen"}
	require.NoError(t, b.CreateSession(ctx, &s))
	// The frozen holder: a connection as a daemon's, its lease row taken
	// and locked in a transaction, then nothing more.
	q := ""
	for k, v := range pgdb.Settings(lease) {
		q += "&" + k + "=" + v
	}
	frozen, err := sql.Open("pgx", url+q)
	require.NoError(t, err)
	defer frozen.Close()
	_, err = frozen.ExecContext(ctx, `INSERT INTO leases (session_id, owner, owner_info, expires_at) VALUES ('frozen', 'f', 'frozen daemon', clock_timestamp() + interval '600 milliseconds')`)
	require.NoError(t, err)
	tx, err := frozen.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `SELECT 1 FROM leases WHERE session_id = 'frozen' FOR SHARE`)
	require.NoError(t, err)
	start := time.Now()

	done := make(chan error, 1)
	go func() {
		for {
			err := b.Acquire(ctx, "frozen")
			if err == nil || time.Since(start) > time.Minute {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
		assert.Less(t, time.Since(start), 3*lease, "took over after %s", time.Since(start))
	case <-time.After(30 * time.Second):
		t.Fatal("the takeover waited on the frozen holder's transaction without bound")
	}
}

func TestFleetAcquireBoundedOnLockedRow(t *testing.T) {
	// Ensures Acquire returns within about a lease even when the lease row
	// is locked by a transaction that never ends and that the server does
	// not end either (a connection of someone else's, without timeouts).
	url := pgtest.NewDB(t)
	const lease = 600 * time.Millisecond
	ctx := context.Background()
	a := openDB(t, url, lease)
	s := tasksessiond.Session{ID: "held"}
	require.NoError(t, a.CreateSession(ctx, &s))
	require.NoError(t, a.Acquire(ctx, "held"))
	_, err := a.SQL().ExecContext(ctx, `UPDATE leases SET expires_at = clock_timestamp() - interval '1 second' WHERE session_id = 'held'`)
	require.NoError(t, err)
	plain, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer plain.Close()
	tx, err := plain.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `SELECT 1 FROM leases WHERE session_id = 'held' FOR UPDATE`)
	require.NoError(t, err)

	b := openDB(t, url, lease)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- b.Acquire(ctx, "held") }()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Less(t, time.Since(start), 3*lease)
	case <-time.After(30 * time.Second):
		t.Fatal("Acquire waited on a locked row without bound")
	}
}

func TestFleetLookingTakesNoLease(t *testing.T) {
	// Ensures that looking at a session from a daemon that does not serve
	// it (tasks, export, the board: sessions/resume; sessions/snapshot; a
	// read tool call) answers from the database and takes no lease: the
	// session's own host goes on writing at its daemon, idle or not.
	url, _, b, ca, cb := twoDaemons(t)
	ctx := context.Background()
	newSessionWith(t, cb, "look", "one")
	raw := openDB(t, url, 0).SQL()
	leases := func() int {
		var n int
		require.NoError(t, raw.QueryRowContext(ctx, `SELECT count(*) FROM leases WHERE session_id = 'look'`).Scan(&n))
		return n
	}
	for _, idle := range []bool{false, true} {
		if idle {
			require.Equal(t, 1, b.Manager().EvictIdle(0), "b's host is idle: b gives the lease up")
			require.Equal(t, 0, leases())
		}
		r, err := ca.ResumeSession(ctx, "look")
		require.NoError(t, err)
		require.NotEmpty(t, r.Tasks)
		assert.Equal(t, "one", r.Tasks[0].Subject)
		snap, err := ca.Snapshot(ctx, "look")
		require.NoError(t, err)
		assert.Len(t, snap.Tasks, len(r.Tasks))
		list, err := call(t, ca, "look", "TaskList", `{}`, "")
		require.NoError(t, err)
		assert.Contains(t, string(list), "one")
		st, err := ca.Status(ctx)
		require.NoError(t, err)
		assert.Equal(t, 0, st.Sessions.Loaded, "a keeps no copy")
		if idle {
			assert.Equal(t, 0, leases(), "nobody took the lease by looking")
		}
		// b's host writes on, at b.
		_, err = call(t, cb, "look", "TaskCreate", `{"subject":"more"}`, "")
		require.NoError(t, err)
	}
	r, err := ca.ResumeSession(ctx, "look")
	require.NoError(t, err)
	assert.Len(t, r.Tasks, 3, "a reads the current list")
}

func TestFleetWatchToldOfTakeover(t *testing.T) {
	// Ensures a watch at the daemon that served a session is ended, with a
	// reason, once another daemon takes the session over, instead of going
	// silent; and that a watch asked of a daemon while another serves the
	// session is refused with -32006, naming it.
	url := pgtest.NewDB(t)
	a := startFleetDaemon(t, url, 600*time.Millisecond)
	b := startFleetDaemon(t, url, 600*time.Millisecond)
	ca, cb := testutil.DialSocket(t, a.Socket()), testutil.DialSocket(t, b.Socket())
	ctx := context.Background()
	newSessionWith(t, ca, "w", "a1")
	events := make(chan client.Notification, 16)
	ca.OnNotification(func(n client.Notification) { events <- n })
	require.NoError(t, ca.Watch(ctx, "w"))
	require.ErrorIs(t, cb.Watch(ctx, "w"), client.ErrSessionLeased, "a serves it: watch it there")

	_, err := call(t, ca, "w", "TaskCreate", `{"subject":"a2"}`, "")
	require.NoError(t, err)
	n := <-events
	assert.Equal(t, client.NotifyTasksChanged, n.Method)

	raw := openDB(t, url, 0).SQL()
	_, err = raw.ExecContext(ctx, `UPDATE leases SET owner = 'elsewhere', owner_info = 'daemon b2', expires_at = clock_timestamp() + interval '1 hour' WHERE session_id = 'w'`)
	require.NoError(t, err)
	select {
	case n := <-events:
		assert.Equal(t, "notifications/sessions/watchEnded", n.Method)
		e, err := client.DecodeEvent(n)
		require.NoError(t, err)
		assert.Contains(t, e.Message, "no longer served by this daemon")
	case <-time.After(20 * time.Second):
		t.Fatal("the watch went silent after the takeover")
	}
}

func TestFleetStatusShowsLeases(t *testing.T) {
	// Ensures status in fleet mode shows the daemon's lease id and how many
	// leases it holds, not SQLite's WAL, and no password.
	url := pgtest.NewDB(t)
	withPassword := url + "&password=s3cret"
	a := startFleetDaemon(t, withPassword, 0)
	ca := testutil.DialSocket(t, a.Socket())
	ctx := context.Background()
	newSessionWith(t, ca, "st", "x")
	st, err := ca.Status(ctx)
	require.NoError(t, err)
	assert.Nil(t, st.WAL)
	require.NotNil(t, st.Fleet)
	assert.Contains(t, st.Fleet.LeaseOwner, fmt.Sprintf("pid %d", os.Getpid()))
	assert.Equal(t, 1, st.Fleet.LeasesHeld)
	assert.NotContains(t, st.Database, "s3cret")
}

func TestFleetLostLeaseErrorSaysSo(t *testing.T) {
	// Ensures a write after this daemon's lease ran out, with nobody else
	// holding the session, says that the lease was lost (not that storage
	// is unavailable), and that a retry then succeeds.
	url := pgtest.NewDB(t)
	a := startFleetDaemon(t, url, time.Minute)
	ca := testutil.DialSocket(t, a.Socket())
	ctx := context.Background()
	newSessionWith(t, ca, "x", "one")
	raw := openDB(t, url, 0).SQL()
	_, err := raw.ExecContext(ctx, `UPDATE leases SET expires_at = clock_timestamp() - interval '1 second' WHERE session_id = 'x'`)
	require.NoError(t, err)
	_, err = call(t, ca, "x", "TaskCreate", `{"subject":"two"}`, "k")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "lease on the session expired")
	assert.NotContains(t, err.Error(), "storage is unavailable")
	_, err = call(t, ca, "x", "TaskCreate", `{"subject":"two"}`, "k")
	require.NoError(t, err)
}

func TestFleetFailedErrorResultRetriedAnswersSame(t *testing.T) {
	// Ensures a write whose row cannot be written (an outage) is not
	// acknowledged even when its result is an error that changed nothing,
	// so that a retry with its callId never answers differently from an
	// answer the client already had.
	url := pgtest.NewDB(t)
	a := startFleetDaemon(t, url, 0)
	ca := testutil.DialSocket(t, a.Socket())
	ctx := context.Background()
	newSessionWith(t, ca, "o", "one")
	raw := openDB(t, url, 0).SQL()
	_, err := raw.ExecContext(ctx, `ALTER TABLE tool_calls ADD CONSTRAINT outage CHECK (false) NOT VALID`)
	require.NoError(t, err)
	first, ferr := call(t, ca, "o", "TaskUpdate", `{"taskid":2,"status":"completed"}`, "k")
	t.Logf("first: %s %v", first, ferr)
	_, err = raw.ExecContext(ctx, `ALTER TABLE tool_calls DROP CONSTRAINT outage`)
	require.NoError(t, err)
	_, err = call(t, ca, "o", "TaskCreate", `{"subject":"two"}`, "")
	require.NoError(t, err)
	again, err := call(t, ca, "o", "TaskUpdate", `{"taskid":2,"status":"completed"}`, "k")
	require.NoError(t, err)
	if ferr == nil {
		assert.Equal(t, string(first), string(again), "the retry answers as the acknowledged call did")
	} else {
		require.ErrorIs(t, ferr, client.ErrStorageUnavailable)
	}
}

func TestFleetRetryAnsweredWhereverServed(t *testing.T) {
	// Ensures a write retried with a callId already in the session's log is
	// answered with the recorded result at a daemon that does not serve
	// the session, even while another serves it and after it was sealed,
	// and takes no lease there.
	_, _, _, ca, cb := twoDaemons(t)
	ctx := context.Background()
	_, err := ca.CreateSession(ctx, wire.CreateSession{SessionID: "r"})
	require.NoError(t, err)
	first, err := call(t, ca, "r", "TaskCreate", `{"subject":"once"}`, "k1")
	require.NoError(t, err)
	again, err := call(t, cb, "r", "TaskCreate", `{"subject":"once"}`, "k1")
	require.NoError(t, err, "a serves it; b answers the retry from the log")
	assert.Equal(t, string(first), string(again))
	_, err = call(t, cb, "r", "TaskCreate", `{"subject":"other"}`, "k1")
	require.ErrorIs(t, err, client.ErrCallIDConflict)

	_, err = ca.Compact(ctx, wire.Compact{SessionID: "r", NewSessionID: "r2"})
	require.NoError(t, err)
	again, err = call(t, cb, "r", "TaskCreate", `{"subject":"once"}`, "k1")
	require.NoError(t, err, "sealed, and its lease a's")
	assert.Equal(t, string(first), string(again))
	// A new write there is refused, naming the daemon that serves it.
	_, err = call(t, cb, "r", "TaskCreate", `{"subject":"new"}`, "k2")
	require.ErrorIs(t, err, client.ErrSessionLeased)
}

func TestFleetCompactionCommitsOnlyUnderLease(t *testing.T) {
	// Ensures a compaction whose lease runs out while it runs (the daemon
	// stalled inside it; here a statement made slow) does not commit: the
	// lease is checked again just before the commit.
	url := pgtest.NewDB(t)
	const lease = 600 * time.Millisecond
	ctx := context.Background()
	a := openDB(t, url, lease)
	s := tasksessiond.Session{ID: "slow"}
	require.NoError(t, a.CreateSession(ctx, &s))
	require.NoError(t, a.Acquire(ctx, "slow"))
	_, err := a.SQL().ExecContext(ctx, `CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1.5); RETURN NEW; END $$;
		CREATE TRIGGER stall BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION stall()`)
	require.NoError(t, err)
	plan, err := compact.Build(s, store.New(), "slow2", "a summary")
	require.NoError(t, err)
	err = a.Compact(ctx, plan)
	require.ErrorIs(t, err, tasksessiond.ErrLeaseExpired)
	var status string
	require.NoError(t, a.SQL().QueryRowContext(ctx, `SELECT status FROM sessions WHERE id = 'slow'`).Scan(&status))
	assert.Equal(t, "active", status, "nothing of the compaction committed")
}
