package server_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

func TestWatch(t *testing.T) {
	// Ensures a watching connection receives each committed change in
	// order, with its seq, and a notice with the successor at compaction;
	// failed calls and reads send nothing.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	writer, watcher := d.Dial(t), d.Dial(t)
	s, err := writer.CreateSession(ctx, client.CreateSession{})
	require.NoError(t, err)

	var mu sync.Mutex
	var got []client.Event
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
	out, err := writer.Compact(ctx, client.Compact{SessionID: s.ID})
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
	assert.Equal(t, int64(4), got[1].Seq, "the failed update took seq 3 but sent nothing")
	assert.Equal(t, "completed", got[1].Task.Status)
	assert.Equal(t, "compacted", got[2].Op)
	assert.Equal(t, out.Session.ID, got[2].SuccessorID)

	err = watcher.Watch(ctx, "ghost")
	assert.ErrorIs(t, err, client.ErrSessionNotFound)
}
