package server_test

import (
	"fmt"
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

func TestDuplicateWatchesAreOne(t *testing.T) {
	// Ensures a connection that watches one session many times (and every
	// session many times) holds one subscription of each, and is sent each
	// change once; past MaxWatches sessions, a new watch is refused.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t), func(c *server.Config) { c.MaxWatches = 3 })
	writer, watcher := d.Dial(t), d.Dial(t)
	s, err := writer.CreateSession(ctx, wire.CreateSession{})
	require.NoError(t, err)
	var mu sync.Mutex
	seqs := map[int64]int{}
	watcher.OnNotification(func(n client.Notification) {
		e, err := client.DecodeEvent(n)
		require.NoError(t, err)
		mu.Lock()
		seqs[e.Seq]++
		mu.Unlock()
	})
	for range 200 {
		require.NoError(t, watcher.Watch(ctx, s.ID))
	}
	assert.Equal(t, 1, d.Srv.Watching(), "one subscription")
	for i := range 3 {
		_, err := writer.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": fmt.Sprint(i)}})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return seqs[3] > 0 }, 10*time.Second, time.Millisecond)
	mu.Lock()
	assert.Equal(t, map[int64]int{1: 1, 2: 1, 3: 1}, seqs, "each change once")
	mu.Unlock()

	for range 5 {
		require.NoError(t, watcher.WatchAll(ctx))
	}
	assert.Equal(t, 2, d.Srv.Watching(), "one sessions/watchAll")
	other, err := writer.CreateSession(ctx, wire.CreateSession{})
	require.NoError(t, err)
	require.NoError(t, watcher.Watch(ctx, other.ID))
	third, err := writer.CreateSession(ctx, wire.CreateSession{})
	require.NoError(t, err)
	err = watcher.Watch(ctx, third.ID)
	assert.ErrorIs(t, err, client.ErrInvalidRequest)
	assert.ErrorContains(t, err, "already watches 3 sessions, the most one may")
	require.NoError(t, watcher.Watch(ctx, s.ID), "one it watches is no new watch")
}

func TestBatchRepliesAreBounded(t *testing.T) {
	// Ensures a batch's replies are bounded: past MaxBatch requests the
	// batch is refused whole, and once its replies pass MaxBatchBytes the
	// requests left are not done and are answered so, each by its id.
	const limit = 1 << 20
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t), func(c *server.Config) { c.MaxBatch, c.MaxBatchBytes = 20, limit })
	w := d.Dial(t)
	s, err := w.CreateSession(ctx, wire.CreateSession{SessionID: "big"})
	require.NoError(t, err)
	for i := range 30 { // about 300 KB of snapshot
		_, err := w.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskCreate",
			Arguments: map[string]any{"subject": fmt.Sprint(i), "description": strings.Repeat("d", 10_000)}})
		require.NoError(t, err)
	}
	batch := func(n int, method string) string {
		var b strings.Builder
		b.WriteString("[")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"sessionId":"big"}}`, i, method)
		}
		return b.String() + "]"
	}
	c := dialRaw(t, d.Socket)
	c.send(batch(21, "sessions/snapshot"))
	r := c.recv()
	assert.Contains(t, r["error"].(map[string]any)["message"], "a batch holds at most 20 requests and this one holds 21; nothing was done")

	c.send(batch(20, "sessions/snapshot"))
	resps := c.recvArray()
	require.Len(t, resps, 20)
	answered := 0
	for i, r := range resps {
		assert.EqualValues(t, i, r["id"])
		if r["error"] == nil {
			assert.Equal(t, answered, i, "the answered come first")
			answered++
			continue
		}
		assert.Contains(t, r["error"].(map[string]any)["message"], "this batch's replies passed 1048576 bytes before sessions/snapshot: it was not done")
	}
	// Each snapshot is over a third of the bound: the first past it is
	// the last done.
	assert.Equal(t, 2, answered)

	c.send(batch(20, "sessions/get"))
	for _, r := range c.recvArray() {
		assert.Nil(t, r["error"], "small replies are not held back")
	}
}
