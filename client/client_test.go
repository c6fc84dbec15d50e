package client_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
)

func TestConcurrentUseOfOneConnection(t *testing.T) {
	// Ensures many goroutines can share one client, each getting its own answer.
	ctx := context.Background()
	c, err := client.Dial(ctx, os.Getenv("TASKSESSIOND_SOCKET"))
	require.NoError(t, err)
	defer c.Close()
	s, err := c.CreateSession(ctx, client.CreateSession{})
	require.NoError(t, err)
	var wg sync.WaitGroup
	ids := make(chan int, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": fmt.Sprint("t", i)}})
			if assert.NoError(t, err) {
				ids <- r.StructuredContent.Task.Taskid
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[int]bool{}
	for id := range ids {
		seen[id] = true
	}
	assert.Len(t, seen, 40, "every call got its own task")
}

func TestContextAndClose(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c, err := client.Dial(ctx, os.Getenv("TASKSESSIOND_SOCKET"))
	require.NoError(t, err)
	cancel()
	_, err = c.Status(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	require.NoError(t, c.Close())
	_, err = c.Status(context.Background())
	assert.ErrorIs(t, err, client.ErrClosed)

	_, err = client.Dial(context.Background(), "/nonexistent/tsd.sock")
	assert.ErrorContains(t, err, "is the daemon running?")
}
