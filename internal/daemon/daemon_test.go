package daemon_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/daemon"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/server"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

var ctx = context.Background()

// running is a daemon serving until the test ends (or it is stopped).
type running struct {
	dm     *daemon.Daemon
	done   chan error // what Serve returned
	closed bool
	cerr   error // what Close returned
	waited bool
	serr   error
}

// open opens a daemon on cfg and serves it until the test ends.
func open(t *testing.T, cfg daemon.Config) *running {
	t.Helper()
	dm, err := daemon.Open(ctx, cfg)
	require.NoError(t, err)
	return run(t, dm)
}

// run serves dm until the test ends.
func run(t *testing.T, dm *daemon.Daemon) *running {
	t.Helper()
	r := &running{dm: dm, done: make(chan error, 1)}
	go func() { r.done <- dm.Serve() }()
	t.Cleanup(func() {
		assert.NoError(t, r.close())
		assert.NoError(t, r.wait(t), "Serve returns nil after Close")
	})
	return r
}

// close closes the daemon, once.
func (r *running) close() error {
	if !r.closed {
		r.closed = true
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		r.cerr = r.dm.Close(cctx)
	}
	return r.cerr
}

// wait returns what Serve returned, waiting for it at most 10 seconds.
func (r *running) wait(t *testing.T) error {
	t.Helper()
	if !r.waited {
		select {
		case r.serr = <-r.done:
			r.waited = true
		case <-time.After(10 * time.Second):
			return errors.New("Serve did not return")
		}
	}
	return r.serr
}

// stop closes the daemon and checks that Serve returns nil.
func (r *running) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, r.close())
	require.NoError(t, r.wait(t), "Serve returns nil after Close")
}

// rawConn is a connection that speaks the wire by hand: for messages no
// client would send.
type rawConn struct {
	nc net.Conn
	r  *bufio.Reader
}

func dialRaw(t *testing.T, socket string) *rawConn {
	t.Helper()
	nc, err := net.Dial("unix", socket)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	return &rawConn{nc: nc, r: bufio.NewReader(nc)}
}

// recv reads one message, waiting at most 10 seconds.
func (c *rawConn) recv(t *testing.T) map[string]any {
	t.Helper()
	require.NoError(t, c.nc.SetReadDeadline(time.Now().Add(10*time.Second)))
	line, err := c.r.ReadBytes('\n')
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(line, &m), string(line))
	return m
}

// errorMessage is a response's error message ("" if it has none).
func errorMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

func TestOpenCreatesTheDatabaseAndServes(t *testing.T) {
	// Ensures Open on a path that does not exist yet creates the database
	// (and its directory) and serves on the socket: a client's
	// daemon/status names the database, the socket and the version, and
	// the tools work; after Close, Serve returns nil and the database is
	// released (another Open of it succeeds and finds what was written).
	path := filepath.Join(t.TempDir(), "state", "tasksessiond", "t.db")
	sock := testutil.SocketPath(t)
	r := open(t, daemon.Config{DB: path, Socket: sock, Sync: db.SyncNormal, Version: "v-test"})
	assert.FileExists(t, path)
	assert.Equal(t, sock, r.dm.Socket())

	c := testutil.DialSocket(t, sock)
	st, err := c.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, path, st.Database)
	assert.Equal(t, sock, st.Socket)
	assert.Equal(t, "v-test", st.Version)
	assert.Equal(t, os.Getpid(), st.PID)
	_, err = c.CreateSession(ctx, wire.CreateSession{SessionID: "s"})
	require.NoError(t, err)
	res, err := c.CallTool(ctx, client.ToolCall{SessionID: "s", Name: "TaskCreate", Arguments: map[string]any{"subject": "Read the code"}})
	require.NoError(t, err)
	require.False(t, res.IsError, string(res.Raw))

	r.stop(t)
	_, err = net.Dial("unix", sock)
	assert.Error(t, err, "nothing serves on the socket after Close")

	d := testutil.MustOpenDBAt(t, path) // fails if the daemon still held it
	tasks, err := d.Tasks(ctx, "s")
	require.NoError(t, err)
	require.Len(t, tasks, 1)
	assert.Equal(t, "Read the code", tasks[0].Subject)
}

func TestOpenRefusesALiveSocket(t *testing.T) {
	// Ensures Open refuses a socket on which a live daemon answers, with
	// server.ErrSocketInUse, before it touches the database: neither the
	// file nor its directory is created, and the live daemon goes on
	// serving.
	live := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	dir := filepath.Join(t.TempDir(), "never")
	dm, err := daemon.Open(ctx, daemon.Config{DB: filepath.Join(dir, "t.db"), Socket: live.Socket})
	require.ErrorIs(t, err, server.ErrSocketInUse)
	assert.Nil(t, dm)
	assert.ErrorContains(t, err, live.Socket)
	assert.NoDirExists(t, dir, "the database was not touched")

	st, err := live.Dial(t).Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, live.DB.Path(), st.Database, "the live daemon still serves")
}

func TestOpenRefusesAnUnsafeSocketDirectoryFirst(t *testing.T) {
	// Ensures Open refuses a socket directory open to other users before
	// it creates or migrates a database: the file is not made.
	dir := filepath.Dir(testutil.SocketPath(t))
	require.NoError(t, os.Chmod(dir, 0o755))
	path := filepath.Join(t.TempDir(), "t.db")
	dm, err := daemon.Open(ctx, daemon.Config{DB: path, Socket: filepath.Join(dir, "d.sock")})
	require.ErrorContains(t, err, "open to other users")
	assert.Nil(t, dm)
	assert.NoFileExists(t, path, "the database was not touched")
}

func TestOpenThatCannotListenReleasesTheDatabase(t *testing.T) {
	// Ensures an Open that has opened the database but cannot listen (a
	// file that is not a socket where the socket goes) fails with that
	// reason and closes the database it opened, so that a later start can
	// take it.
	socket := testutil.SocketPath(t)
	require.NoError(t, os.WriteFile(socket, []byte("not a socket"), 0o600))
	path := filepath.Join(t.TempDir(), "t.db")
	dm, err := daemon.Open(ctx, daemon.Config{DB: path, Socket: socket})
	require.ErrorContains(t, err, "is not a socket")
	assert.Nil(t, dm)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err, "the failed Open released the database")
	require.NoError(t, d.Close())
}

func TestStartLeavesTheDatabaseOpen(t *testing.T) {
	// Ensures Start wires a daemon around a database the caller opened,
	// reports its path when cfg.DB is empty, and leaves it open after
	// Close: still usable, still locked against another writer, and
	// servable again by a second Start.
	d := testutil.MustOpenDB(t)
	sock := testutil.SocketPath(t)
	dm, err := daemon.Start(d, daemon.Config{Socket: sock})
	require.NoError(t, err)
	r := run(t, dm)
	c := testutil.DialSocket(t, sock)
	st, err := c.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, d.Path(), st.Database)
	_, err = c.CreateSession(ctx, wire.CreateSession{SessionID: "s"})
	require.NoError(t, err)
	_, err = c.CallTool(ctx, client.ToolCall{SessionID: "s", Name: "TaskCreate", Arguments: map[string]any{"subject": "one"}})
	require.NoError(t, err)
	r.stop(t)

	tasks, err := d.Tasks(ctx, "s")
	require.NoError(t, err, "the database is still open")
	assert.Len(t, tasks, 1)
	_, err = db.Open(ctx, d.Path(), db.Options{})
	require.ErrorIs(t, err, db.ErrLocked, "and still this process's to write")

	again := testutil.StartDaemon(t, d)
	res, err := again.Dial(t).CallTool(ctx, client.ToolCall{SessionID: "s", Name: "TaskCreate", Arguments: map[string]any{"subject": "two"}})
	require.NoError(t, err)
	assert.Contains(t, string(res.Raw), `"taskid":2`)
}

func TestCloseLetsAnInFlightCallFinish(t *testing.T) {
	// Ensures Close waits for a call in flight (here, waiting in its commit
	// on a write lock another program holds) to commit and be answered,
	// and only then closes the database and lets Serve return nil; the
	// answered call is in the database.
	path := filepath.Join(t.TempDir(), "t.db")
	sock := testutil.SocketPath(t)
	r := open(t, daemon.Config{DB: path, Socket: sock, Sync: db.SyncNormal})
	c := testutil.DialSocket(t, sock)
	_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: "s"})
	require.NoError(t, err)
	watcher := testutil.DialSocket(t, sock)

	raw := testutil.RawDB(t, path)
	lock, err := raw.Conn(ctx)
	require.NoError(t, err)
	defer lock.Close()
	_, err = lock.ExecContext(ctx, "BEGIN IMMEDIATE")
	require.NoError(t, err)

	answered := make(chan error, 1)
	var res *wire.CallToolResult
	go func() {
		var err error
		res, err = c.CallTool(ctx, client.ToolCall{SessionID: "s", Name: "TaskCreate", Arguments: map[string]any{"subject": "in flight"}, CallID: "c1"})
		answered <- err
	}()
	require.Eventually(t, func() bool {
		st, err := watcher.Status(ctx)
		return err == nil && st.CallsServed == 1
	}, 10*time.Second, 5*time.Millisecond, "the call is in flight")

	closed := make(chan error, 1)
	go func() { closed <- r.close() }()
	select {
	case err := <-answered:
		t.Fatalf("the call was answered while the write lock was held: %v", err)
	case err := <-closed:
		t.Fatalf("Close returned while a call was in flight: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	_, err = lock.ExecContext(ctx, "ROLLBACK")
	require.NoError(t, err)

	select {
	case err := <-answered:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight was never answered")
	}
	require.False(t, res.IsError, string(res.Raw))
	assert.Contains(t, string(res.Raw), `"taskid":1`)
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return once the call was answered")
	}
	require.NoError(t, r.wait(t), "Serve returns nil after Close")

	lock.Close()
	d := testutil.MustOpenDBAt(t, path) // the daemon's Close released it
	calls, err := d.Calls(ctx, "s")
	require.NoError(t, err)
	require.Len(t, calls, 1, "the answered call committed")
	assert.Equal(t, "c1", calls[0].CallID)
}

func TestServerConfigIsApplied(t *testing.T) {
	// Ensures Config.Server adjusts the server's configuration and that the
	// daemon's own fields reach it: a shortened line timeout closes a
	// connection stalled mid-message (saying so, with the shortened
	// timeout), a smaller line limit refuses a longer message, and
	// MaxConns refuses a connection past it.
	sock := testutil.SocketPath(t)
	open(t, daemon.Config{DB: filepath.Join(t.TempDir(), "t.db"), Socket: sock, MaxConns: 2, Server: func(c *server.Config) {
		c.LineTimeout = 300 * time.Millisecond
		c.MaxLine = 4096
	}})

	stalled := dialRaw(t, sock)
	_, err := stalled.nc.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"daemon/st`))
	require.NoError(t, err)
	// Well under the default 10 s, and the message names the timeout.
	assert.Contains(t, errorMessage(stalled.recv(t)), "within 300ms of its first byte")

	long := dialRaw(t, sock)
	_, err = long.nc.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"daemon/status","params":{"pad":"` + strings.Repeat("x", 5000) + `"}}` + "\n"))
	require.NoError(t, err)
	assert.Contains(t, errorMessage(long.recv(t)), "the limit is 4096 bytes")
	_, err = long.nc.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"daemon/status"}` + "\n"))
	require.NoError(t, err)
	assert.Nil(t, long.recv(t)["error"], "a message within the limit is served on the same connection")

	// The stalled connection's end may not be counted yet on a loaded
	// machine: the second is served once it is.
	require.Eventually(t, func() bool {
		second := dialRaw(t, sock)
		if _, err := second.nc.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"daemon/status"}` + "\n")); err != nil {
			return false
		}
		if second.recv(t)["error"] != nil {
			second.nc.Close()
			return false
		}
		return true
	}, 10*time.Second, 50*time.Millisecond, "two connections are served")
	third := dialRaw(t, sock)
	assert.Contains(t, errorMessage(third.recv(t)), "serves at most 2 at once")
}

func TestMaxLoadedBoundsTheSessionsInMemory(t *testing.T) {
	// Ensures Config.MaxLoaded reaches the session manager: with a cap of 2,
	// using 6 sessions leaves at most 2 in memory (daemon/status counts
	// them), and an evicted session comes back whole on its next use.
	sock := testutil.SocketPath(t)
	open(t, daemon.Config{DB: filepath.Join(t.TempDir(), "t.db"), Socket: sock, MaxLoaded: 2})
	c := testutil.DialSocket(t, sock)
	for i := range 6 {
		id := fmt.Sprintf("s%d", i)
		_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: id})
		require.NoError(t, err)
		_, err = c.CallTool(ctx, client.ToolCall{SessionID: id, Name: "TaskCreate", Arguments: map[string]any{"subject": "task of " + id}})
		require.NoError(t, err)
	}
	st, err := c.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 6, st.Sessions.Total)
	assert.LessOrEqual(t, st.Sessions.Loaded, 2)
	assert.Positive(t, st.Sessions.Loaded)

	got, err := c.ResumeSession(ctx, "s0")
	require.NoError(t, err)
	require.Len(t, got.Tasks, 1)
	assert.Equal(t, "task of s0", got.Tasks[0].Subject)
}

func TestIdleTimeoutEvictsIdleSessions(t *testing.T) {
	// Ensures Config.IdleTimeout reaches the evictor: a session unused for
	// longer is dropped from memory (daemon/status shows none loaded; the
	// evictor looks once a second), and is replayed whole on its next use.
	sock := testutil.SocketPath(t)
	open(t, daemon.Config{DB: filepath.Join(t.TempDir(), "t.db"), Socket: sock, IdleTimeout: 50 * time.Millisecond})
	c := testutil.DialSocket(t, sock)
	_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: "s"})
	require.NoError(t, err)
	_, err = c.CallTool(ctx, client.ToolCall{SessionID: "s", Name: "TaskCreate", Arguments: map[string]any{"subject": "kept"}})
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		st, err := c.Status(ctx)
		return err == nil && st.Sessions.Loaded == 0
	}, 15*time.Second, 20*time.Millisecond, "the idle session is evicted")

	got, err := c.ResumeSession(ctx, "s")
	require.NoError(t, err)
	require.Len(t, got.Tasks, 1)
	assert.Equal(t, "kept", got.Tasks[0].Subject)
	assert.Equal(t, 2, got.NextTaskid)
}

func TestDefaultsKeepSessionsLoaded(t *testing.T) {
	// Ensures a zero MaxLoaded and IdleTimeout take the defaults (10,000
	// sessions, 30 minutes), not "none": sessions used stay in memory.
	sock := testutil.SocketPath(t)
	open(t, daemon.Config{DB: filepath.Join(t.TempDir(), "t.db"), Socket: sock})
	c := testutil.DialSocket(t, sock)
	for i := range 3 {
		id := fmt.Sprintf("s%d", i)
		_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: id})
		require.NoError(t, err)
		_, err = c.CallTool(ctx, client.ToolCall{SessionID: id, Name: "TaskList"})
		require.NoError(t, err)
	}
	st, err := c.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, st.Sessions.Loaded)
	assert.Equal(t, 3, st.Sessions.Total)
}
