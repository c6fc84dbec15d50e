package server_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestWatchAll(t *testing.T) {
	// Ensures a connection that called sessions/watchAll receives the
	// committed changes of every session, a session created after it
	// subscribed included, each naming its session and in commit order per
	// session, and the compaction notice; once it closes, writers go on.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	writer, watcher := d.Dial(t), d.Dial(t)
	a, err := writer.CreateSession(ctx, wire.CreateSession{})
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
	require.NoError(t, watcher.WatchAll(ctx))

	b, err := writer.CreateSession(ctx, wire.CreateSession{})
	require.NoError(t, err)
	for _, c := range []client.ToolCall{
		{SessionID: a.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": "in a"}},
		{SessionID: b.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": "in b"}},
		{SessionID: a.ID, Name: "TaskUpdate", Arguments: map[string]any{"taskid": 1, "status": "inprogress"}},
		{SessionID: b.ID, Name: "TaskGet", Arguments: map[string]any{"taskid": 1}},
	} {
		_, err := writer.CallTool(ctx, c)
		require.NoError(t, err)
	}
	out, err := writer.Compact(ctx, wire.Compact{SessionID: b.ID})
	require.NoError(t, err)
	for range 4 {
		select {
		case <-arrived:
		case <-time.After(10 * time.Second):
			t.Fatal("notification did not arrive")
		}
	}
	mu.Lock()
	require.Len(t, got, 4, "three writes and a compaction; the read sent nothing")
	assert.Equal(t, []string{client.NotifyTasksChanged, client.NotifyTasksChanged, client.NotifyTasksChanged, client.NotifySessionCompacted}, methods)
	assert.Equal(t, a.ID, got[0].SessionID)
	assert.Equal(t, "in a", got[0].Task.Subject)
	assert.Equal(t, b.ID, got[1].SessionID)
	assert.Equal(t, "in b", got[1].Task.Subject)
	assert.Equal(t, a.ID, got[2].SessionID)
	assert.Equal(t, "inprogress", string(got[2].Task.Status))
	assert.Equal(t, b.ID, got[3].SessionID)
	assert.Equal(t, out.Session.ID, got[3].SuccessorID)
	mu.Unlock()

	// Its params are none: a stray one is refused, the connection serves on.
	err = watcher.Call(ctx, "sessions/watchAll", map[string]any{"sessionId": a.ID}, nil)
	assert.ErrorIs(t, err, client.ErrInvalidParams)

	// A closed watcher is unsubscribed: writes go on, and nothing is sent.
	require.NoError(t, watcher.Close())
	_, err = writer.CallTool(ctx, client.ToolCall{SessionID: a.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": "after"}})
	require.NoError(t, err)
}
