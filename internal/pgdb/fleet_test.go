package pgdb_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/compact"
	"github.com/tasksessiond/tasksessiond/internal/daemon"
	"github.com/tasksessiond/tasksessiond/internal/pgdb"
	"github.com/tasksessiond/tasksessiond/internal/pgtest"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// fleetDaemon is a daemon of a fleet, in process, on a real socket.
type fleetDaemon struct {
	*daemon.Daemon
	served chan error
}

// twoDaemons starts two daemons of a minute's lease on a new database, and
// a client of each.
func twoDaemons(t *testing.T) (url string, a, b *fleetDaemon, ca, cb *client.Client) {
	t.Helper()
	url = pgtest.NewDB(t)
	a, b = startFleetDaemon(t, url, time.Minute), startFleetDaemon(t, url, time.Minute)
	return url, a, b, testutil.DialSocket(t, a.Socket()), testutil.DialSocket(t, b.Socket())
}

func startFleetDaemon(t *testing.T, url string, lease time.Duration) *fleetDaemon {
	t.Helper()
	dm, err := daemon.Open(context.Background(), daemon.Config{DB: url, Socket: testutil.SocketPath(t), Version: "test", Lease: lease, Logger: testLogger()})
	require.NoError(t, err)
	d := &fleetDaemon{Daemon: dm, served: make(chan error, 1)}
	go func() { d.served <- dm.Serve() }()
	t.Cleanup(func() { d.stop(t) })
	return d
}

func (d *fleetDaemon) stop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if d.Close(ctx) == nil {
		require.NoError(t, <-d.served)
	}
}

func openDB(t *testing.T, url string, lease time.Duration) *pgdb.DB {
	t.Helper()
	d, err := pgdb.Open(context.Background(), url, pgdb.Options{Lease: lease})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return d
}

func call(t *testing.T, c *client.Client, session, name, args, callID string) (json.RawMessage, error) {
	t.Helper()
	var raw json.RawMessage
	err := c.Call(context.Background(), "tools/call", map[string]any{"sessionId": session, "name": name, "arguments": json.RawMessage(args), "callId": callID}, &raw)
	return raw, err
}

// newSessionWith creates session id at c's daemon with one task, subject.
func newSessionWith(t *testing.T, c *client.Client, id, subject string) {
	t.Helper()
	_, err := c.CreateSession(context.Background(), wire.CreateSession{SessionID: id})
	require.NoError(t, err)
	_, err = call(t, c, id, "TaskCreate", fmt.Sprintf(`{"subject":%q}`, subject), "")
	require.NoError(t, err)
}

// script is a session's life through every method that writes or reads
// the store, run alike on SQLite and on PostgreSQL.
func script(t *testing.T, c *client.Client) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	add := func(v any) {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: "s1", Title: "fleet", Metadata: json.RawMessage(`{"k":"v"}`)})
	require.NoError(t, err)
	for i, a := range []struct{ name, args string }{
		{"TaskCreate", `{"subject":"one","description":"first"}`},
		{"TaskCreate", `{"subject":"two"}`},
		{"TaskUpdate", `{"taskid":1,"status":"in_progress"}`},
		{"TaskUpdate", `{"taskid":9,"status":"completed"}`}, // an error result, logged
		{"TaskUpdate", `{"taskid":2,"status":"deleted"}`},
		{"TaskList", `{}`},
		{"TaskGet", `{"taskid":1}`},
	} {
		raw, err := call(t, c, "s1", a.name, a.args, fmt.Sprintf("c%d", i))
		require.NoError(t, err)
		out = append(out, string(raw))
	}
	// A retry returns the recorded result; another call under its callId is a conflict.
	raw, err := call(t, c, "s1", "TaskCreate", `{"subject":"one","description":"first"}`, "c0")
	require.NoError(t, err)
	out = append(out, string(raw))
	_, err = call(t, c, "s1", "TaskCreate", `{"subject":"other"}`, "c0")
	require.ErrorIs(t, err, client.ErrCallIDConflict)

	cp, err := c.Compact(ctx, wire.Compact{SessionID: "s1", NewSessionID: "s2", Summary: "so far"})
	require.NoError(t, err)
	add([]any{cp.Session.Counts, cp.Messages, cp.ForcedCall})
	_, err = call(t, c, "s1", "TaskCreate", `{"subject":"late"}`, "c9")
	require.ErrorIs(t, err, client.ErrSessionSealed)
	raw, err = call(t, c, "s2", "TaskCreate", `{"subject":"three"}`, "c10")
	require.NoError(t, err)
	out = append(out, string(raw))
	// A callId of the ancestor, retried on the successor: the recorded result.
	raw, err = call(t, c, "s2", "TaskUpdate", `{"taskid":1,"status":"in_progress"}`, "c2")
	require.NoError(t, err)
	out = append(out, string(raw))

	r, err := c.ResumeSession(ctx, "s2")
	require.NoError(t, err)
	add([]any{r.Tasks, r.NextTaskid, r.Messages, r.ForcedCall, r.Replay})
	for _, id := range []string{"s1", "s2"} {
		s, err := c.GetSession(ctx, id)
		require.NoError(t, err)
		add([]any{s.ID, s.Status, s.ParentID, s.SuccessorID, s.HeadID, s.Counts, string(s.Metadata), s.Title})
	}
	r, err = c.ReplaySession(ctx, "s3", []client.TranscriptCall{
		{Name: "TaskCreate", Arguments: json.RawMessage(`{"subject":"a"}`), CallID: "t1"},
		{Name: "TaskCreate", Arguments: json.RawMessage(`{"subject":""}`), CallID: "t2"},
		{Name: "TaskUpdate", Arguments: json.RawMessage(`{"taskid":1,"status":"completed"}`), CallID: "t3"},
	})
	require.NoError(t, err)
	add([]any{r.Tasks, r.NextTaskid, r.Replay})
	var ids []string
	cursor := ""
	for {
		page, next, err := c.ListSessions(ctx, tasksessiond.ListFilter{Limit: 2, Cursor: cursor})
		require.NoError(t, err)
		for _, s := range page {
			ids = append(ids, s.ID+":"+s.Status)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	add(ids)
	st, err := c.Status(ctx)
	require.NoError(t, err)
	add(st.Sessions)
	return out
}

func TestFleetSameAsSQLite(t *testing.T) {
	// Ensures the daemon on PostgreSQL answers a session's whole life —
	// writes, errors, retries, compaction, resume, sessions/get, replay,
	// paging, status — exactly as it does on SQLite.
	lite := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	want := script(t, lite.Dial(t))
	pg := startFleetDaemon(t, pgtest.NewDB(t), 0)
	got := script(t, testutil.DialSocket(t, pg.Socket()))
	require.Len(t, got, len(want))
	for i := range want {
		assert.JSONEq(t, want[i], got[i], "step %d", i)
	}
}

func TestFleetTasksView(t *testing.T) {
	// Ensures the tasks view a person reads with psql is exact after every
	// acknowledged call, across a compaction too.
	url := pgtest.NewDB(t)
	d := startFleetDaemon(t, url, 0)
	c := testutil.DialSocket(t, d.Socket())
	ctx := context.Background()
	view := openDB(t, url, 0)
	_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: "v"})
	require.NoError(t, err)
	_, err = c.CreateSession(ctx, wire.CreateSession{SessionID: "empty"})
	require.NoError(t, err)
	check := func(id string) {
		r, err := c.ResumeSession(ctx, id)
		require.NoError(t, err)
		got, err := view.Tasks(ctx, id)
		require.NoError(t, err)
		require.Len(t, got, len(r.Tasks))
		for i := range got {
			assert.Equal(t, r.Tasks[i].Taskid, got[i].Taskid)
			assert.Equal(t, r.Tasks[i].Status, got[i].Status)
			assert.Equal(t, r.Tasks[i].Subject, got[i].Subject)
			assert.Equal(t, r.Tasks[i].Description, got[i].Description)
		}
	}
	// An empty session compacted: its successor's snapshot has no tasks.
	_, err = c.Compact(ctx, wire.Compact{SessionID: "empty", NewSessionID: "empty2"})
	require.NoError(t, err)
	check("empty2")
	for i := range 5 {
		_, err := call(t, c, "v", "TaskCreate", fmt.Sprintf(`{"subject":"t%d","description":"d%d"}`, i, i), "")
		require.NoError(t, err)
		check("v")
	}
	_, err = call(t, c, "v", "TaskUpdate", `{"taskid":2,"status":"completed","subject":"done"}`, "")
	require.NoError(t, err)
	check("v")
	_, err = c.Compact(ctx, wire.Compact{SessionID: "v", NewSessionID: "w"})
	require.NoError(t, err)
	check("w")
	check("v")
	_, err = call(t, c, "w", "TaskUpdate", `{"taskid":3,"status":"deleted"}`, "")
	require.NoError(t, err)
	_, err = call(t, c, "w", "TaskCreate", `{"subject":"new"}`, "")
	require.NoError(t, err)
	check("w")
	// A description longer than a result echoes, then a status change
	// (which sets no description): the view shows it whole.
	long := strings.Repeat("a long description ", 40)
	_, err = call(t, c, "w", "TaskCreate", `{"subject":"long","description":"`+long+`"}`, "")
	require.NoError(t, err)
	_, err = call(t, c, "w", "TaskUpdate", `{"taskid":7,"status":"inprogress"}`, "")
	require.NoError(t, err)
	check("w")
}

func TestFleetLeaseNamesOwner(t *testing.T) {
	// Ensures a session is served by one daemon at a time: a call for it
	// at another daemon gets -32006 naming the holder, and once the holder
	// stops (giving its leases up) the other serves it at once, replaying
	// it, and a callId retried there returns the recorded result.
	url := pgtest.NewDB(t)
	a := startFleetDaemon(t, url, 0)
	b := startFleetDaemon(t, url, 0)
	ca, cb := testutil.DialSocket(t, a.Socket()), testutil.DialSocket(t, b.Socket())
	ctx := context.Background()
	_, err := ca.CreateSession(ctx, wire.CreateSession{SessionID: "s"})
	require.NoError(t, err)
	first, err := call(t, ca, "s", "TaskCreate", `{"subject":"on a"}`, "k1")
	require.NoError(t, err)

	_, err = call(t, cb, "s", "TaskCreate", `{"subject":"on b"}`, "k2")
	var ce *client.Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, client.ErrSessionLeased.Code, ce.Code, "%v", err)
	assert.Contains(t, ce.LeaseOwner(), fmt.Sprintf("pid %d", os.Getpid()))
	assert.Contains(t, ce.Message, ce.LeaseOwner())
	// Reads are answered from the database, without taking the lease.
	list, err := call(t, cb, "s", "TaskList", `{}`, "")
	require.NoError(t, err)
	assert.Contains(t, string(list), "on a")
	_, err = call(t, cb, "s", "TaskCreate", `{"subject":"on b"}`, "k2")
	require.ErrorIs(t, err, client.ErrSessionLeased, "a still holds it")
	// sessions/get does not load the session: any daemon answers it.
	s, err := cb.GetSession(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, 1, s.Counts.Total)

	a.stop(t)
	again, err := call(t, cb, "s", "TaskCreate", `{"subject":"on a"}`, "k1")
	require.NoError(t, err)
	assert.Equal(t, string(first), string(again), "the retry returns the recorded result")
	_, err = call(t, cb, "s", "TaskCreate", `{"subject":"on b"}`, "k2")
	require.NoError(t, err)
	r, err := cb.ResumeSession(ctx, "s")
	require.NoError(t, err)
	require.Len(t, r.Tasks, 2)
	assert.Equal(t, "on b", r.Tasks[1].Subject)
}

func TestFleetFencing(t *testing.T) {
	// Ensures a daemon whose lease was taken over cannot write: its next
	// append fails (-32006 naming the new holder), it drops the session,
	// and the log holds only the new holder's calls after the takeover.
	url := pgtest.NewDB(t)
	a := startFleetDaemon(t, url, 0)
	b := startFleetDaemon(t, url, 0)
	ca, cb := testutil.DialSocket(t, a.Socket()), testutil.DialSocket(t, b.Socket())
	ctx := context.Background()
	_, err := ca.CreateSession(ctx, wire.CreateSession{SessionID: "f"})
	require.NoError(t, err)
	_, err = call(t, ca, "f", "TaskCreate", `{"subject":"a1"}`, "")
	require.NoError(t, err)
	// a's lease runs out while a still holds the session in memory (a
	// pause, a partition): b takes it.
	raw := openDB(t, url, 0).SQL()
	_, err = raw.ExecContext(ctx, `UPDATE leases SET expires_at = clock_timestamp() - interval '1 second' WHERE session_id = 'f'`)
	require.NoError(t, err)
	_, err = call(t, cb, "f", "TaskCreate", `{"subject":"b2"}`, "")
	require.NoError(t, err)

	_, err = call(t, ca, "f", "TaskCreate", `{"subject":"a-late"}`, "")
	require.ErrorIs(t, err, client.ErrSessionLeased)
	list, err := call(t, ca, "f", "TaskList", `{}`, "")
	require.NoError(t, err)
	assert.Contains(t, string(list), "b2", "a dropped its stale copy and reads the database")
	r, err := cb.ResumeSession(ctx, "f")
	require.NoError(t, err)
	require.Len(t, r.Tasks, 2)
	assert.Equal(t, "b2", r.Tasks[1].Subject)
}

func TestFleetLostLeaseDropsSession(t *testing.T) {
	// Ensures a daemon that finds at renewal that its lease is gone drops
	// the session from memory, without waiting for a write.
	url := pgtest.NewDB(t)
	a := startFleetDaemon(t, url, 300*time.Millisecond)
	ca := testutil.DialSocket(t, a.Socket())
	ctx := context.Background()
	_, err := ca.CreateSession(ctx, wire.CreateSession{SessionID: "l"})
	require.NoError(t, err)
	_, err = call(t, ca, "l", "TaskCreate", `{"subject":"x"}`, "")
	require.NoError(t, err)
	st, err := ca.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, st.Sessions.Loaded)
	raw := openDB(t, url, 0).SQL()
	_, err = raw.ExecContext(ctx, `UPDATE leases SET owner = 'elsewhere', owner_info = 'another daemon', expires_at = clock_timestamp() + interval '1 hour' WHERE session_id = 'l'`)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := ca.Status(ctx)
		return err == nil && st.Sessions.Loaded == 0
	}, 5*time.Second, 20*time.Millisecond)
	_, err = call(t, ca, "l", "TaskCreate", `{"subject":"y"}`, "")
	var ce *client.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "another daemon", ce.LeaseOwner())
}

func TestFleetPostgresRestart(t *testing.T) {
	// Ensures that PostgreSQL restarted under load costs calls -32004
	// meanwhile and nothing else: every call acknowledged is in the log
	// once, retries by callId succeed after, and memory equals the
	// database.
	url := pgtest.NewDB(t)
	d := startFleetDaemon(t, url, 0)
	ctx := context.Background()
	const clients = 6
	var (
		mu          sync.Mutex
		acked       = map[string]string{} // callId -> session
		other       []error
		unavailable int
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range clients {
		c := testutil.DialSocket(t, d.Socket())
		id := fmt.Sprintf("r%d", i)
		_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: id})
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				callID := fmt.Sprintf("%s-%d", id, n)
				for {
					_, err := call(t, c, id, "TaskCreate", fmt.Sprintf(`{"subject":"t%d"}`, n), callID)
					if err == nil {
						mu.Lock()
						acked[callID] = id
						mu.Unlock()
						break
					}
					mu.Lock()
					unavailable++
					mu.Unlock()
					if !errors.Is(err, client.ErrStorageUnavailable) {
						mu.Lock()
						other = append(other, err)
						mu.Unlock()
						return
					}
					time.Sleep(5 * time.Millisecond) // retrying the same callId
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, pgtest.Shared(t).Restart())
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	require.Empty(t, other, "only -32004 while the server restarts")

	view := openDB(t, url, 0)
	c := testutil.DialSocket(t, d.Socket())
	for i := range clients {
		id := fmt.Sprintf("r%d", i)
		calls, err := view.Calls(ctx, id)
		require.NoError(t, err)
		seen := map[string]int{}
		for _, cl := range calls {
			seen[cl.CallID]++
		}
		for callID, sid := range acked {
			if sid == id {
				assert.Equal(t, 1, seen[callID], "callId %s", callID)
			}
		}
		r, err := c.ResumeSession(ctx, id)
		require.NoError(t, err)
		tasks, err := view.Tasks(ctx, id)
		require.NoError(t, err)
		require.Len(t, r.Tasks, len(tasks), "memory equals the database")
		assert.Equal(t, len(calls), len(tasks))
	}
	assert.Greater(t, len(acked), clients)
	t.Logf("%d calls acknowledged, %d answers -32004 during the restart", len(acked), unavailable)
}

func TestFleetDocQueries(t *testing.T) {
	// Ensures the psql queries docs/FLEET.md shows run against the schema.
	doc, err := os.ReadFile("../../docs/FLEET.md")
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	require.NotEmpty(t, blocks)
	url := pgtest.NewDB(t)
	d := startFleetDaemon(t, url, 0)
	c := testutil.DialSocket(t, d.Socket())
	_, err = c.CreateSession(context.Background(), wire.CreateSession{SessionID: "doc"})
	require.NoError(t, err)
	_, err = call(t, c, "doc", "TaskCreate", `{"subject":"documented"}`, "")
	require.NoError(t, err)
	raw := openDB(t, url, 0).SQL()
	n := 0
	for _, b := range blocks {
		for _, line := range strings.Split(b[1], "\n") {
			q, _, _ := strings.Cut(line, "--")
			if q = strings.TrimSpace(q); q == "" {
				continue
			}
			rows, err := raw.QueryContext(context.Background(), q)
			require.NoError(t, err, q)
			require.True(t, rows.Next(), "%s returns rows", q)
			rows.Close()
			n++
		}
	}
	assert.GreaterOrEqual(t, n, 2)
}

func TestStorageAppendRules(t *testing.T) {
	// Ensures the storage's own rules, whatever the daemon's memory says:
	// no append without the lease, seq and callId once per session
	// (tasksessiond.ErrExists), and none to a sealed session (tasksessiond.ErrSealed).
	ctx := context.Background()
	url := pgtest.NewDB(t)
	d := openDB(t, url, 0)
	s := tasksessiond.Session{ID: "a"}
	require.NoError(t, d.CreateSession(ctx, &s))
	row := func(seq int64, callID string) []tasksessiond.Append {
		return []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: "a", Seq: seq, CallID: callID, Name: "TaskList",
			Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}}}
	}
	require.ErrorIs(t, d.AppendCalls(ctx, row(1, "x")), tasksessiond.ErrLeaseExpired, "not leased")
	require.NoError(t, d.Acquire(ctx, "a"))
	require.NoError(t, d.AppendCalls(ctx, row(1, "x")))
	require.ErrorIs(t, d.AppendCalls(ctx, row(1, "y")), tasksessiond.ErrExists, "seq taken")
	require.ErrorIs(t, d.AppendCalls(ctx, row(2, "x")), tasksessiond.ErrExists, "callId taken")
	require.ErrorIs(t, d.Acquire(ctx, "nope"), tasksessiond.ErrNotFound)

	plan, err := compact.Build(s, store.New(), "b", "")
	require.NoError(t, err)
	require.NoError(t, d.Compact(ctx, plan))
	succ, err := d.LoadSession(ctx, "b")
	require.NoError(t, err)
	assert.Equal(t, plan.New.Snapshot, succ.Snapshot, "the successor's first tasks, stored as JSON")
	require.ErrorIs(t, d.Compact(ctx, plan), tasksessiond.ErrExists)
	plan2, err := compact.Build(s, store.New(), "c", "")
	require.NoError(t, err)
	require.ErrorIs(t, d.Compact(ctx, plan2), tasksessiond.ErrSealed)
	require.ErrorIs(t, d.AppendCalls(ctx, row(2, "z")), tasksessiond.ErrSealed)
	// The successor is leased to the daemon that compacted.
	require.NoError(t, d.AppendCalls(ctx, []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: "b", Seq: 2, Name: "TaskList",
		Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}}}))
	other := openDB(t, url, 0)
	var held *tasksessiond.LeaseHeldError
	require.ErrorAs(t, other.Acquire(ctx, "b"), &held)
	assert.Equal(t, d.Owner(), held.Owner)
}

func TestFleetUnreachableDropsSessions(t *testing.T) {
	// Ensures a daemon that cannot renew its leases for a whole lease
	// (PostgreSQL down) drops those sessions from memory, and serves them
	// again, replayed, once the database is back.
	url := pgtest.NewDB(t)
	a := startFleetDaemon(t, url, 600*time.Millisecond)
	ca := testutil.DialSocket(t, a.Socket())
	ctx := context.Background()
	_, err := ca.CreateSession(ctx, wire.CreateSession{SessionID: "u"})
	require.NoError(t, err)
	_, err = call(t, ca, "u", "TaskCreate", `{"subject":"kept"}`, "")
	require.NoError(t, err)
	st, err := ca.Status(ctx) // counts the sessions once: later it reads no database
	require.NoError(t, err)
	require.Equal(t, 1, st.Sessions.Loaded)
	srv := pgtest.Shared(t)
	require.NoError(t, srv.Stop())
	stopped := true
	t.Cleanup(func() {
		if stopped {
			srv.Start()
		}
	})
	require.Eventually(t, func() bool {
		st, err := ca.Status(ctx)
		return err == nil && st.Sessions.Loaded == 0
	}, 5*time.Second, 20*time.Millisecond)
	_, err = call(t, ca, "u", "TaskList", `{}`, "")
	require.ErrorIs(t, err, client.ErrStorageUnavailable)
	require.NoError(t, srv.Start())
	stopped = false
	require.Eventually(t, func() bool {
		r, err := ca.ResumeSession(ctx, "u")
		return err == nil && len(r.Tasks) == 1
	}, 10*time.Second, 50*time.Millisecond)
}

func TestFleetEvictionGivesLeaseUp(t *testing.T) {
	// Ensures a session that leaves a daemon's memory (idle) is free for
	// another daemon at once, without waiting for its lease to expire.
	_, a, _, ca, cb := twoDaemons(t)
	ctx := context.Background()
	_, err := ca.CreateSession(ctx, wire.CreateSession{SessionID: "e"})
	require.NoError(t, err)
	_, err = call(t, ca, "e", "TaskCreate", `{"subject":"x"}`, "")
	require.NoError(t, err)
	_, err = call(t, cb, "e", "TaskCreate", `{"subject":"y"}`, "")
	require.ErrorIs(t, err, client.ErrSessionLeased)
	require.Equal(t, 1, a.Manager().EvictIdle(0))
	_, err = call(t, cb, "e", "TaskCreate", `{"subject":"y"}`, "")
	require.NoError(t, err)
}

// testLogger shows the daemons' logs with -v.
func testLogger() *slog.Logger {
	if !testing.Verbose() {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
