package server_test

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/server"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestWatch(t *testing.T) {
	// Ensures a watching connection receives each committed change in
	// order, with its seq, and a notice with the successor at compaction;
	// failed calls and reads send nothing.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	writer, watcher := d.Dial(t), d.Dial(t)
	s, err := writer.CreateSession(ctx, wire.CreateSession{})
	require.NoError(t, err)

	var mu sync.Mutex
	var got []wire.Event
	var methods []string
	arrived := make(chan struct{}, 16)
	watcher.OnNotification(func(n client.Notification) {
		e, err := client.DecodeEvent(n)
		require.NoError(t, err)
		mu.Lock()
		got, methods = append(got, e), append(methods, n.Method)
		mu.Unlock()
		arrived <- struct{}{}
	})
	require.NoError(t, watcher.Watch(ctx, s.ID))

	calls := []client.ToolCall{
		{SessionID: s.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": "a"}},
		{SessionID: s.ID, Name: "TaskList"},
		{SessionID: s.ID, Name: "TaskUpdate", Arguments: map[string]any{"taskid": 9, "status": "completed"}},
		{SessionID: s.ID, Name: "TaskUpdate", Arguments: map[string]any{"taskid": 1, "status": "completed"}},
	}
	for _, c := range calls {
		_, err := writer.CallTool(ctx, c)
		require.NoError(t, err)
	}
	out, err := writer.Compact(ctx, wire.Compact{SessionID: s.ID})
	require.NoError(t, err)
	for range 3 {
		select {
		case <-arrived:
		case <-time.After(10 * time.Second):
			t.Fatal("notification did not arrive")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 3)
	assert.Equal(t, []string{client.NotifyTasksChanged, client.NotifyTasksChanged, client.NotifySessionCompacted}, methods)
	assert.Equal(t, "create", got[0].Op)
	assert.Equal(t, int64(1), got[0].Seq)
	assert.Equal(t, "a", got[0].Task.Subject)
	assert.Equal(t, "update", got[1].Op)
	assert.Equal(t, int64(3), got[1].Seq, "the failed update took seq 2 but sent nothing (the TaskList took none: reads are not logged)")
	assert.Equal(t, "completed", string(got[1].Task.Status))
	assert.Equal(t, "compacted", got[2].Op)
	assert.Equal(t, out.Session.ID, got[2].SuccessorID)

	err = watcher.Watch(ctx, "ghost")
	assert.ErrorIs(t, err, client.ErrSessionNotFound)
}

func TestSlowWatcherIsToldAndClosed(t *testing.T) {
	// Ensures a watcher that stops reading never holds up the session's
	// writes or other connections, and, once it reads again, finds the
	// changes up to where it fell behind, a watchLagged notice, and the
	// end of the connection.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t), func(c *server.Config) { c.WatchBuffer = 16 })
	_, err := d.Mgr.Create(ctx, wire.CreateSession{SessionID: "w"})
	require.NoError(t, err)
	w := dialRaw(t, d.Socket)
	w.send(`{"jsonrpc":"2.0","id":1,"method":"sessions/watch","params":{"sessionId":"w"}}`)
	require.Nil(t, w.recv()["error"])

	// w reads nothing now. Enough changes (large ones, to fill the
	// kernel's buffer sooner) overflow that buffer, the connection's queue
	// and the watcher's.
	long := strings.Repeat("x", 450)
	for i := range 1000 {
		_, err := d.Mgr.Call(ctx, wire.ToolCall{SessionID: "w", Name: "TaskCreate", Arguments: json.RawMessage(`{"subject":"` + long + strconv.Itoa(i) + `"}`)})
		require.NoError(t, err)
	}
	other := d.Dial(t)
	_, err = other.Status(ctx)
	require.NoError(t, err, "other connections are served meanwhile")

	var last map[string]any
	n := 0
	w.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		line, err := w.r.ReadBytes('\n')
		if err != nil {
			require.ErrorIs(t, err, io.EOF, "the connection ends cleanly")
			break
		}
		require.NoError(t, json.Unmarshal(line, &last), string(line))
		n++
	}
	require.NotNil(t, last)
	assert.Equal(t, "notifications/sessions/watchLagged", last["method"])
	assert.Contains(t, last["params"].(map[string]any)["message"], "fell more than 16 changes behind")
	assert.Less(t, n, 1001, "it fell behind")
	assert.Greater(t, n, 16, "what was queued before the overflow arrived")
}

func TestStalledMessageIsTimedOut(t *testing.T) {
	// Ensures connections that send half a message and stall are answered
	// with an error and closed after the line timeout, so they cannot hold
	// the connection limit against everyone else; an idle connection
	// between messages is not timed out.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t), func(c *server.Config) {
		c.MaxConns = 3
		c.LineTimeout = 200 * time.Millisecond
	})
	idle := dialRaw(t, d.Socket)
	var stalled []*rawConn
	for range 2 {
		c := dialRaw(t, d.Socket)
		_, err := c.nc.Write([]byte(`{"jsonrpc":"2.0","id":1,"meth`))
		require.NoError(t, err)
		stalled = append(stalled, c)
	}
	for _, c := range stalled {
		msg := c.recv()["error"].(map[string]any)["message"]
		assert.Contains(t, msg, "must arrive whole")
		_, err := c.r.ReadBytes('\n')
		assert.ErrorIs(t, err, io.EOF, "and the connection is closed")
	}
	fresh := d.Dial(t)
	_, err := fresh.Status(ctx)
	require.NoError(t, err, "a new client is served")
	time.Sleep(300 * time.Millisecond) // longer than the line timeout, idle between messages
	idle.send(`{"jsonrpc":"2.0","id":7,"method":"daemon/status"}`)
	assert.Nil(t, idle.recv()["error"], "an idle connection is not timed out")
}

func TestStatusReportsTheWAL(t *testing.T) {
	// Ensures daemon/status reports the WAL as the background checkpoint
	// finds it.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	c := d.Dial(t)
	s, err := c.CreateSession(ctx, wire.CreateSession{})
	require.NoError(t, err)
	_, err = c.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": "a"}})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := c.Status(ctx)
		return err == nil && st.WAL.Frames > 0 && st.WAL.Bytes > 0
	}, 10*time.Second, 10*time.Millisecond)
}
