package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/daemon"
	"github.com/tasksessiond/tasksessiond/internal/server"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

var ctx = context.Background()

// rawConn is a connection that sends and reads lines verbatim.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

func dialRaw(t *testing.T, socket string) *rawConn {
	t.Helper()
	nc, err := net.Dial("unix", socket)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, r: bufio.NewReaderSize(nc, 1<<20)}
}

func (c *rawConn) send(line string) {
	c.t.Helper()
	_, err := c.nc.Write([]byte(line + "\n"))
	require.NoError(c.t, err)
}

func (c *rawConn) recv() map[string]any {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := c.r.ReadBytes('\n')
	require.NoError(c.t, err)
	var v map[string]any
	require.NoError(c.t, json.Unmarshal(line, &v), string(line))
	return v
}

func (c *rawConn) recvArray() []map[string]any {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := c.r.ReadBytes('\n')
	require.NoError(c.t, err)
	var v []map[string]any
	require.NoError(c.t, json.Unmarshal(line, &v), string(line))
	return v
}

func errCode(m map[string]any) float64 {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0
	}
	return e["code"].(float64)
}

func TestProtocolErrorsKeepServing(t *testing.T) {
	// Ensures each kind of bad input gets its JSON-RPC error and the same
	// connection goes on serving.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	c := dialRaw(t, d.Socket)
	for _, tc := range []struct {
		name, line string
		code       float64
		msg        string
	}{
		{"Malformed", `{"jsonrpc":"2.0","id":1,`, -32700, "not valid JSON"},
		{"NotObject", `42`, -32600, "must be an object"},
		{"String", `"hello"`, -32600, "must be an object"},
		{"WrongVersion", `{"jsonrpc":"1.0","id":1,"method":"daemon/status"}`, -32600, `"jsonrpc" must be "2.0"`},
		{"NoMethod", `{"jsonrpc":"2.0","id":1}`, -32600, `"method" is required`},
		{"BadID", `{"jsonrpc":"2.0","id":{"a":1},"method":"daemon/status"}`, -32600, `"id" must be`},
		{"UnknownMethod", `{"jsonrpc":"2.0","id":1,"method":"tasks/nuke"}`, -32601, "the methods are daemon/status"},
		{"ParamsWrongType", `{"jsonrpc":"2.0","id":1,"method":"sessions/get","params":{"sessionId":5}}`, -32602, "invalid params for sessions/get"},
		{"ParamsUnknownField", `{"jsonrpc":"2.0","id":1,"method":"sessions/get","params":{"session_id":"x"}}`, -32602, `unknown field "session_id"`},
		{"ParamsScalar", `{"jsonrpc":"2.0","id":1,"method":"sessions/get","params":3}`, -32600, `"params" must be an object`},
		{"UnknownSession", `{"jsonrpc":"2.0","id":1,"method":"sessions/get","params":{"sessionId":"ghost"}}`, -32001, `session "ghost" not found`},
		{"UnknownSessionCall", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"sessionId":"ghost","name":"TaskList"}}`, -32001, "not found"},
		{"UnknownTool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"sessionId":"ghost","name":"TaskNuke"}}`, -32602, "unknown tool"},
		{"NoToolName", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"sessionId":"ghost"}}`, -32602, `"name" is required`},
		{"BadRole", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"role":"root"}}`, -32602, "role must be"},
		{"BadFormat", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"format":"xml"}}`, -32602, "format must be"},
		{"InvalidUTF8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}", -32700, `invalid UTF-8 within "/method"`},
		{"NUL", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"daemon/status\"\x00}", -32700, "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.send(tc.line)
			resp := c.recv()
			assert.Equal(t, tc.code, errCode(resp), "%v", resp)
			assert.Contains(t, resp["error"].(map[string]any)["message"], tc.msg)
			c.send(`{"jsonrpc":"2.0","id":"alive","method":"daemon/status"}`)
			ok := c.recv()
			assert.Equal(t, "alive", ok["id"])
			assert.Nil(t, ok["error"])
		})
	}
}

func TestErrorKeepsRequestID(t *testing.T) {
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	c := dialRaw(t, d.Socket)
	c.send(`{"jsonrpc":"1.0","id":"abc","method":"daemon/status"}`)
	assert.Equal(t, "abc", c.recv()["id"])
	c.send(`{"jsonrpc":"2.0","id":7,"method":"nope"}`)
	assert.Equal(t, float64(7), c.recv()["id"])
}

func TestBatchAndNotifications(t *testing.T) {
	// Ensures a batch gets an array of responses (invalid members answered in
	// place) and notifications get no response.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	c := dialRaw(t, d.Socket)
	c.send(`[{"jsonrpc":"2.0","id":1,"method":"daemon/status"},{"jsonrpc":"2.0","method":"daemon/status"},5,{"jsonrpc":"2.0","id":2,"method":"nope"}]`)
	resps := c.recvArray()
	require.Len(t, resps, 3)
	byID := map[any]map[string]any{}
	for _, r := range resps {
		byID[r["id"]] = r
	}
	assert.Nil(t, byID[float64(1)]["error"])
	assert.Equal(t, float64(-32601), errCode(byID[float64(2)]))
	assert.Equal(t, float64(-32600), errCode(byID[nil]))

	c.send(`[]`)
	assert.Equal(t, float64(-32600), errCode(c.recv()))

	c.send(`{"jsonrpc":"2.0","method":"daemon/status"}`) // a notification: no answer
	c.send(`{"jsonrpc":"2.0","id":3,"method":"daemon/status"}`)
	assert.Equal(t, float64(3), c.recv()["id"])
}

func TestPipelinedCallsApplyInOrder(t *testing.T) {
	// Ensures requests pipelined on one connection are applied in the order sent.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	info, err := d.Mgr.Create(ctx, wire.CreateSession{SessionID: "pipe"})
	require.NoError(t, err)
	c := dialRaw(t, d.Socket)
	var b strings.Builder
	for i := 1; i <= 50; i++ {
		b.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"sessionId":"` + info.ID + `","name":"TaskCreate","arguments":{"subject":"t` + strconv.Itoa(i) + `"}}}` + "\n")
	}
	_, err = c.nc.Write([]byte(b.String()))
	require.NoError(t, err)
	for i := 1; i <= 50; i++ {
		resp := c.recv()
		require.Equal(t, float64(i), resp["id"])
		task := resp["result"].(map[string]any)["structuredContent"].(map[string]any)["task"].(map[string]any)
		assert.Equal(t, float64(i), task["taskid"])
		assert.Equal(t, "t"+strconv.Itoa(i), task["subject"])
	}
}

func TestOversizeLine(t *testing.T) {
	// Ensures a line over the limit is refused without reading it into a
	// request, and the connection goes on.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	c := dialRaw(t, d.Socket)
	go c.nc.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"daemon/status","params":{"x":"` + strings.Repeat("a", 3<<20) + `"}}` + "\n"))
	resp := c.recv()
	assert.Equal(t, float64(-32600), errCode(resp))
	assert.Contains(t, resp["error"].(map[string]any)["message"], "line too long")
	c.send(`{"jsonrpc":"2.0","id":2,"method":"daemon/status"}`)
	assert.Equal(t, float64(2), c.recv()["id"])
}

func TestOtherConnectionsUnaffected(t *testing.T) {
	// Ensures a client that connects and never sends, or sends half a line,
	// does not hold up others.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	dialRaw(t, d.Socket) // connects and never sends
	half := dialRaw(t, d.Socket)
	half.nc.Write([]byte(`{"jsonrpc":"2.0","id":1,"meth`))
	cl := d.Dial(t)
	_, err := cl.Status(ctx)
	require.NoError(t, err)
}

func TestConnectionLimit(t *testing.T) {
	// Ensures a connection over the limit gets a clear error and the
	// connections within it keep working.
	d := testutil.MustOpenDB(t)
	sock := testutil.SocketPath(t)
	srv := server.New(session.NewManager(d, nil), server.Config{Socket: sock, MaxConns: 2})
	require.NoError(t, srv.Listen())
	go srv.Serve()
	t.Cleanup(func() { srv.Shutdown(ctx) })

	a, b := testutil.DialSocket(t, sock), testutil.DialSocket(t, sock)
	for _, c := range []*client.Client{a, b} {
		_, err := c.Status(ctx)
		require.NoError(t, err)
	}
	third := dialRaw(t, sock)
	resp := third.recv()
	assert.Contains(t, resp["error"].(map[string]any)["message"], "too many connections")
	_, err := a.Status(ctx)
	assert.NoError(t, err)
}

func TestSocketSafety(t *testing.T) {
	d := testutil.MustOpenDB(t)
	newServer := func(sock string) *server.Server {
		return server.New(session.NewManager(d, nil), server.Config{Socket: sock})
	}
	t.Run("Mode0600InNew0700Dir", func(t *testing.T) {
		sock := filepath.Join(filepath.Dir(testutil.SocketPath(t)), "sub", "d.sock")
		srv := newServer(sock)
		require.NoError(t, srv.Listen())
		defer srv.Shutdown(ctx)
		fi, err := os.Stat(sock)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		di, err := os.Stat(filepath.Dir(sock))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), di.Mode().Perm())
	})
	t.Run("TooLongRefusedBeforeAnythingIsMade", func(t *testing.T) {
		// Ensures a socket path past the kernel's limit is refused with a
		// message that says so, before the daemon creates its database.
		dir := t.TempDir()
		dbPath := filepath.Join(dir, "never.db")
		sock := filepath.Join(dir, strings.Repeat("s", 120)+".sock")
		_, err := daemon.Open(ctx, daemon.Config{DB: dbPath, Socket: sock})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "Unix socket paths are limited to 103")
		_, statErr := os.Stat(dbPath)
		assert.ErrorIs(t, statErr, os.ErrNotExist, "nothing was created")
	})
	t.Run("RefusesLiveDaemon", func(t *testing.T) {
		sock := testutil.SocketPath(t)
		live := newServer(sock)
		require.NoError(t, live.Listen())
		go live.Serve()
		defer live.Shutdown(ctx)
		err := newServer(sock).Listen()
		assert.ErrorIs(t, err, server.ErrSocketInUse)
	})
	t.Run("ReplacesStaleSocket", func(t *testing.T) {
		sock := testutil.SocketPath(t)
		ln, err := net.Listen("unix", sock)
		require.NoError(t, err)
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close() // leaves the file, with nobody listening
		_, err = os.Lstat(sock)
		require.NoError(t, err)
		srv := newServer(sock)
		require.NoError(t, srv.Listen())
		srv.Shutdown(ctx)
	})
	t.Run("RefusesRegularFile", func(t *testing.T) {
		sock := testutil.SocketPath(t)
		require.NoError(t, os.WriteFile(sock, []byte("data"), 0o600))
		assert.ErrorContains(t, newServer(sock).Listen(), "is not a socket")
		b, _ := os.ReadFile(sock)
		assert.Equal(t, "data", string(b), "the file is left alone")
	})
	t.Run("RefusesSharedDirectory", func(t *testing.T) {
		dir := filepath.Dir(testutil.SocketPath(t))
		require.NoError(t, os.Chmod(dir, 0o755))
		err := newServer(filepath.Join(dir, "d.sock")).Listen()
		assert.ErrorContains(t, err, "open to other users; refusing to use it")
		_, statErr := os.Lstat(filepath.Join(dir, "d.sock"))
		assert.ErrorIs(t, statErr, os.ErrNotExist, "nothing was created there")
	})
	t.Run("RefusesOtherUsersDirectory", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("giving a directory to another user needs root")
		}
		dir := filepath.Dir(testutil.SocketPath(t))
		require.NoError(t, os.Chown(dir, 4242, 4242))
		assert.ErrorContains(t, newServer(filepath.Join(dir, "d.sock")).Listen(), "belongs to uid 4242")
	})
	t.Run("RefusesSymlink", func(t *testing.T) {
		sock := testutil.SocketPath(t)
		require.NoError(t, os.Symlink("/tmp/elsewhere.sock", sock))
		assert.ErrorContains(t, newServer(sock).Listen(), "symlink")
	})
}

func TestShutdownFinishesInFlight(t *testing.T) {
	// Ensures a request being served when shutdown starts is answered.
	d := testutil.MustOpenDB(t)
	sock := testutil.SocketPath(t)
	mgr := session.NewManager(d, nil)
	srv := server.New(mgr, server.Config{Socket: sock})
	require.NoError(t, srv.Listen())
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	info, err := mgr.Create(ctx, wire.CreateSession{})
	require.NoError(t, err)

	c := dialRaw(t, sock)
	var b strings.Builder
	for i := 0; i < 20; i++ {
		b.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"sessionId":"` + info.ID + `","name":"TaskCreate","arguments":{"subject":"x"}}}` + "\n")
	}
	c.send(strings.TrimSuffix(b.String(), "\n"))
	first := c.recv() // at least one is in flight or done
	require.Nil(t, first["error"])
	require.NoError(t, srv.Shutdown(ctx))
	require.NoError(t, <-done)

	// Every answered call is in the log, and nothing unanswered is.
	answered := 1
	c.nc.SetReadDeadline(time.Now().Add(time.Second))
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			break
		}
		if strings.Contains(string(line), `"result"`) {
			answered++
		}
	}
	rows, err := d.Calls(ctx, info.ID)
	require.NoError(t, err)
	assert.Equal(t, answered, len(rows))
}

func TestRefusesOtherUsers(t *testing.T) {
	// Ensures a connection from a uid the daemon does not serve is refused
	// (checked with SO_PEERCRED), and its own user's are served.
	if runtime.GOOS != "linux" {
		t.Skip("SO_PEERCRED is Linux-only; elsewhere the socket's mode is the guard")
	}
	d := testutil.MustOpenDB(t)
	for _, tc := range []struct {
		name  string
		allow []int
		ok    bool
	}{
		{"Owner", nil, true},
		{"Other", []int{os.Getuid() + 1000}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock := testutil.SocketPath(t)
			var logs testutil.SyncBuffer
			srv := server.New(session.NewManager(d, nil), server.Config{Socket: sock, AllowUIDs: tc.allow,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			require.NoError(t, srv.Listen())
			go srv.Serve()
			defer srv.Shutdown(ctx)
			c := dialRaw(t, sock)
			if tc.ok {
				c.send(`{"jsonrpc":"2.0","id":1,"method":"daemon/status"}`)
				assert.Nil(t, c.recv()["error"])
				return
			}
			// Refused at once, before it sends anything, and logged.
			assert.Contains(t, c.recv()["error"].(map[string]any)["message"], "may not use this daemon")
			assert.Contains(t, logs.String(), "connection refused: peer is another user")
		})
	}
}

func TestOversizeArguments(t *testing.T) {
	// Ensures over-long subjects and descriptions get tool errors the model
	// can act on, and change nothing.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	c := d.Dial(t)
	s, err := c.CreateSession(ctx, wire.CreateSession{})
	require.NoError(t, err)
	for _, args := range []map[string]any{
		{"subject": strings.Repeat("s", 10_000)},
		{"subject": "ok", "description": strings.Repeat("d", 100_000)},
	} {
		r, err := c.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskCreate", Arguments: args})
		require.NoError(t, err)
		assert.True(t, r.IsError)
		assert.Contains(t, r.Text(), "the limit is")
	}
	got, err := c.ResumeSession(ctx, s.ID)
	require.NoError(t, err)
	assert.Empty(t, got.Tasks)
}

func TestThousandsOfTasks(t *testing.T) {
	// Ensures a session of thousands of tasks keeps working: TaskList fits
	// what it can into the host's limit (the open tasks, closed ones as id
	// ranges; these 2,000 fit as one line each), and resume has them all.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	info, err := d.Mgr.Create(ctx, wire.CreateSession{})
	require.NoError(t, err)
	const n = 2000
	c := dialRaw(t, d.Socket)
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"sessionId":"` + info.ID + `","name":"TaskCreate","arguments":{"subject":"task ` + strconv.Itoa(i) + `"}}}` + "\n")
	}
	go c.nc.Write([]byte(b.String()))
	for range n {
		require.Nil(t, c.recv()["error"])
	}
	// A reply past the writer's 64 KB batch is written from where it is:
	// it arrives whole, its newline, then what was pipelined after it.
	c.send(`{"jsonrpc":"2.0","id":"snap","method":"sessions/snapshot","params":{"sessionId":"` + info.ID + `"}}` + "\n" +
		`{"jsonrpc":"2.0","id":"status","method":"daemon/status"}`)
	snap := c.recv()
	require.Equal(t, "snap", snap["id"])
	assert.Len(t, snap["result"].(map[string]any)["tasks"], n)
	assert.Equal(t, "status", c.recv()["id"])
	cl := d.Dial(t)
	r, err := cl.CallTool(ctx, client.ToolCall{SessionID: info.ID, Name: "TaskList"})
	require.NoError(t, err)
	assert.Equal(t, n, must(r.Listing()).Counts.Total)
	assert.LessOrEqual(t, len(r.Raw), 2*tools.MaxResultChars+1000, "text and structured, each within the limit")
	assert.NotEmpty(t, must(r.Listing()).Note, "shortened to fit, and saying so")
	got, err := cl.ResumeSession(ctx, info.ID)
	require.NoError(t, err)
	require.Len(t, got.Tasks, n)
	assert.Equal(t, n, got.Tasks[n-1].Taskid)
	created, err := cl.CallTool(ctx, client.ToolCall{SessionID: info.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": "one more"}})
	require.NoError(t, err)
	assert.Equal(t, n+1, must(created.Written()).Task.Taskid)
}

func TestDisconnectMidRequest(t *testing.T) {
	// Ensures a client that sends a call and hangs up without reading the
	// answer leaves a consistent state whichever way the race went: the
	// call is applied once or not at all, and the host's retry with the
	// same callId after reconnecting gets the one task, logged once.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	info, err := d.Mgr.Create(ctx, wire.CreateSession{})
	require.NoError(t, err)
	nc, err := net.Dial("unix", d.Socket)
	require.NoError(t, err)
	_, err = nc.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"sessionId":"` + info.ID + `","name":"TaskCreate","arguments":{"subject":"orphan"},"callId":"gone-1"}}` + "\n"))
	require.NoError(t, err)
	nc.Close()

	cl := d.Dial(t)
	again, err := cl.CallTool(ctx, client.ToolCall{SessionID: info.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": "orphan"}, CallID: "gone-1"})
	require.NoError(t, err)
	assert.Equal(t, 1, must(again.Written()).Task.Taskid)
	rows, err := d.DB.Calls(ctx, info.ID)
	require.NoError(t, err)
	assert.Len(t, rows, 1)
}

func TestHangUpCancelsWaitingRequest(t *testing.T) {
	// Ensures a request waiting for a busy session is cancelled when its
	// peer hangs up, and is never applied; while a peer that only closes
	// its writing half (as socat does at the end of its input) is answered.
	path := filepath.Join(t.TempDir(), "h.db")
	var logs testutil.SyncBuffer
	d := testutil.StartDaemon(t, testutil.MustOpenDBAt(t, path), func(c *server.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	info, err := d.Mgr.Create(ctx, wire.CreateSession{SessionID: "busy"})
	require.NoError(t, err)
	call := func(id, callID, subject string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"sessionId":"busy","name":"TaskCreate","arguments":{"subject":"` + subject + `"},"callId":"` + callID + `"}}`
	}

	// Another program holds the write lock, so the first call waits in its
	// commit, holding the session.
	raw := testutil.RawDB(t, path)
	conn, err := raw.Conn(ctx)
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
	require.NoError(t, err)
	first := dialRaw(t, d.Socket)
	first.send(call("1", "first", "first"))
	cl := d.Dial(t)
	require.Eventually(t, func() bool {
		st, err := cl.Status(ctx)
		return err == nil && st.CallsServed == 1
	}, 10*time.Second, 5*time.Millisecond, "the first call holds the session")

	gone, err := net.Dial("unix", d.Socket)
	require.NoError(t, err)
	_, err = gone.Write([]byte(call("2", "hung-up", "never") + "\n"))
	require.NoError(t, err)
	require.NoError(t, gone.Close())
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "request abandoned: its peer hung up") },
		10*time.Second, 5*time.Millisecond, "the hung-up request stops waiting for the session")

	half, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: d.Socket, Net: "unix"})
	require.NoError(t, err)
	defer half.Close()
	_, err = half.Write([]byte(call("3", "half", "half-closed") + "\n"))
	require.NoError(t, err)
	require.NoError(t, half.CloseWrite())

	_, err = conn.ExecContext(ctx, "COMMIT")
	require.NoError(t, err)
	conn.Close()
	assert.Nil(t, first.recv()["error"])
	half.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(half).ReadBytes('\n')
	require.NoError(t, err)
	assert.Contains(t, string(line), `"taskid":2`, "the half-closed peer is answered")

	r, err := cl.ResumeSession(ctx, info.ID)
	require.NoError(t, err)
	var subjects []string
	for _, task := range r.Tasks {
		subjects = append(subjects, task.Subject)
	}
	assert.Equal(t, []string{"first", "half-closed"}, subjects, "the hung-up call was not applied")
}

func TestEveryMethodRejectsUnknownParams(t *testing.T) {
	// Ensures each served method decodes its params strictly and names
	// itself in the error, so a misspelt field is reported, not ignored.
	dm := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	c := dm.Dial(t)
	for _, method := range dm.Srv.Methods() {
		t.Run(method, func(t *testing.T) {
			err := c.Call(ctx, method, map[string]any{"session_id": "s"}, nil)
			require.ErrorIs(t, err, client.ErrInvalidParams)
			assert.ErrorContains(t, err, "invalid params for "+method)
			assert.ErrorContains(t, err, "session_id")
		})
	}
}

func TestBadValuesAreNotEchoedOrMisread(t *testing.T) {
	// Ensures an unknown method's name is not echoed back whole (a 100 KB
	// name gets a short error), and that a cursor this daemon could not
	// have handed out ("0", "-5", "x") is invalid params, not an empty page.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	c := dialRaw(t, d.Socket)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("m", 100_000) + `"}`)
	r := c.recv()
	e := r["error"].(map[string]any)
	assert.EqualValues(t, -32601, e["code"])
	assert.Less(t, len(e["message"].(string)), 1000)
	for i, cursor := range []string{"0", "-5", "x"} {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"sessions/list","params":{"cursor":%q}}`, i+2, cursor))
		r := c.recv()
		require.NotNil(t, r["error"], "cursor %q", cursor)
		assert.EqualValues(t, -32602, r["error"].(map[string]any)["code"], "cursor %q", cursor)
	}
}

func TestNothingIsReadSilentlyOtherwise(t *testing.T) {
	// Ensures what Go's decoder would quietly change or pick is refused
	// with a clear error and changes nothing: a member given twice in the
	// envelope or the params (which method, which session, which callId?),
	// and a lone surrogate escape inside arguments sent as a string (it
	// would be stored as U+FFFD).
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	info, err := d.Mgr.Create(ctx, wire.CreateSession{SessionID: "s"})
	require.NoError(t, err)
	c := dialRaw(t, d.Socket)
	for i, tc := range []struct {
		line string
		code float64
		msg  string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"daemon/status","method":"tools/call"}`, -32600, `"method" is given twice`},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"sessionId":"s","sessionId":"t","name":"TaskCreate","arguments":{"subject":"x"}}}`, -32602, `"sessionId" is given twice`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"sessionId":"s","name":"TaskCreate","callId":"a","callId":"b","arguments":{"subject":"x"}}}`, -32602, `"callId" is given twice`},
		// Go matches a struct's fields without regard to case: these too.
		{`{"jsonrpc":"2.0","id":5,"method":"sessions/create","params":{"sessionId":"meant","SESSIONID":"other"}}`, -32602, `"SESSIONID" is given twice`},
		{`{"jsonrpc":"2.0","id":6,"METHOD":"daemon/status","method":"tools/list"}`, -32600, `"method" is given twice`},
	} {
		c.send(tc.line)
		r := c.recv()
		require.NotNil(t, r["error"], "case %d", i)
		e := r["error"].(map[string]any)
		assert.Equal(t, tc.code, e["code"], "case %d", i)
		assert.Contains(t, e["message"], tc.msg, "case %d", i)
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"sessionId":"s","name":"TaskCreate","arguments":"{\"subject\":\"a\\ud800b\"}"}}`)
	r := c.recv()
	res := r["result"].(map[string]any)
	assert.Equal(t, true, res["isError"], "a lone surrogate inside string arguments is an error result: %v", res)
	assert.Contains(t, fmt.Sprint(res["content"]), "invalid surrogate pair")
	got, err := d.Mgr.Resume(ctx, info.ID)
	require.NoError(t, err)
	assert.Empty(t, got.Tasks, "nothing was created")
}

func TestShutdownInTheMiddleOfABatch(t *testing.T) {
	// Ensures a shutdown that comes while a large batch is being served
	// starts no more of its elements, answers the batch (the elements
	// applied with their results, the rest with an error saying they were
	// not started), and that exactly the answered-as-applied ones are in
	// the log.
	d := testutil.MustOpenDB(t)
	sock := testutil.SocketPath(t)
	m := session.NewManager(d, nil)
	const n = 3000
	srv := server.New(m, server.Config{Socket: sock, MaxBatch: n}) // past the default, so the shutdown comes mid-batch
	require.NoError(t, srv.Listen())
	go srv.Serve()
	info, err := m.Create(ctx, wire.CreateSession{SessionID: "batch"})
	require.NoError(t, err)
	c := dialRaw(t, sock)
	var b strings.Builder
	b.WriteString("[")
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"sessionId":"batch","name":"TaskCreate","arguments":{"subject":"t%d"}}}`, i, i)
	}
	b.WriteString("]")
	c.send(b.String())
	require.Eventually(t, func() bool {
		rows, err := d.Calls(ctx, info.ID)
		return err == nil && len(rows) > 0
	}, 10*time.Second, time.Millisecond)
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(ctx) }()

	resps := c.recvArray()
	require.Len(t, resps, n, "every element is answered")
	applied, refused := 0, 0
	for _, r := range resps {
		if r["error"] != nil {
			assert.Contains(t, r["error"].(map[string]any)["message"], "shutting down")
			refused++
			continue
		}
		applied++
	}
	require.NoError(t, <-shut)
	rows, err := d.Calls(ctx, info.ID)
	require.NoError(t, err)
	assert.Equal(t, applied, len(rows), "the log holds exactly what was answered as applied")
	assert.Positive(t, refused, "the shutdown stopped the batch")
}

// must returns v, panicking on err: a test's decoding of a result it made.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestResultsAreNotHTMLEscaped(t *testing.T) {
	// Ensures every method's result, not only a tool's, carries <, > and &
	// as they are: \u003c costs six bytes for one, and a model reads it.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	info, err := d.Mgr.Create(ctx, wire.CreateSession{})
	require.NoError(t, err)
	c := dialRaw(t, d.Socket)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"sessionId":"` + info.ID + `","name":"TaskCreate","arguments":{"subject":"check a < b && b > c"}}}`)
	require.Nil(t, c.recv()["error"])
	c.send(`{"jsonrpc":"2.0","id":2,"method":"sessions/snapshot","params":{"sessionId":"` + info.ID + `"}}`)
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := c.r.ReadBytes('\n')
	require.NoError(t, err)
	assert.Contains(t, string(line), "check a < b && b > c")
	assert.NotContains(t, string(line), `\u003c`)
}

func TestSnapshotAndResumeFitMaxChars(t *testing.T) {
	// Ensures sessions/snapshot and sessions/resume given maxChars fit the
	// list's text (the snapshot's text, the task_snapshot message of a
	// compaction's successor) to it, every open task named, and without it
	// carry the whole list.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	cl := d.Dial(t)
	info, err := d.Mgr.Create(ctx, wire.CreateSession{})
	require.NoError(t, err)
	for i := 1; i <= 300; i++ {
		_, err := cl.CallTool(ctx, client.ToolCall{SessionID: info.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": fmt.Sprintf("Task %03d", i), "description": strings.Repeat("d", 500)}})
		require.NoError(t, err)
	}
	out, err := cl.Compact(ctx, wire.Compact{SessionID: info.ID})
	require.NoError(t, err)
	var snap wire.Snapshot
	require.NoError(t, cl.Call(ctx, wire.MethodSessionsSnapshot, wire.SessionText{SessionID: out.Session.ID, MaxChars: tools.MaxHookChars}, &snap))
	var resumed wire.Resumed
	require.NoError(t, cl.Call(ctx, wire.MethodSessionsResume, wire.SessionText{SessionID: out.Session.ID, MaxChars: tools.MaxHookChars}, &resumed))
	require.NotEmpty(t, resumed.Messages)
	for _, text := range []string{snap.Text, resumed.Messages[0].Content} {
		assert.LessOrEqual(t, tools.Length(text), tools.MaxHookChars)
		for i := 1; i <= 300; i++ {
			assert.Contains(t, text, fmt.Sprintf("\n#%d [pending] Task %03d", i, i))
		}
	}
	whole, err := cl.ResumeSession(ctx, out.Session.ID)
	require.NoError(t, err)
	assert.Greater(t, len(whole.Messages[0].Content), 150_000, "without maxChars, the whole list")
}
