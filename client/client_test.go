package client_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestConcurrentUseOfOneConnection(t *testing.T) {
	// Ensures many goroutines can share one client, each getting its own answer.
	ctx := context.Background()
	c, err := client.Dial(ctx, os.Getenv("TASKSESSIOND_SOCKET"))
	require.NoError(t, err)
	defer c.Close()
	s, err := c.CreateSession(ctx, wire.CreateSession{})
	require.NoError(t, err)
	var wg sync.WaitGroup
	ids := make(chan int, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": fmt.Sprint("t", i)}})
			if assert.NoError(t, err) {
				ids <- must(r.Written()).Task.Taskid
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

// peer is a socket that answers each request line with reply(line), or
// hangs up when reply returns nil: a daemon misbehaving on purpose.
func peer(t *testing.T, reply func(line []byte) []byte) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tsdp")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "p.sock")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				r := bufio.NewReader(nc)
				for {
					line, err := r.ReadBytes('\n')
					if err != nil {
						return
					}
					out := reply(line)
					if out == nil {
						return
					}
					nc.Write(out)
				}
			}()
		}
	}()
	return sock
}

func TestConnectionEndFailsPendingCalls(t *testing.T) {
	// Ensures a call without a deadline does not block forever when the
	// daemon goes away or sends what is not JSON-RPC: it fails with
	// ErrClosed, Done is closed and Err says why.
	for name, tc := range map[string]struct {
		reply func([]byte) []byte
		want  string
	}{
		"hang-up":  {func([]byte) []byte { return nil }, "connection closed"},
		"garbage":  {func([]byte) []byte { return []byte("Content-Length: 42\n") }, "not JSON-RPC"},
		"stray id": {func([]byte) []byte { return []byte(`{"jsonrpc":"2.0","id":"x","result":{}}` + "\n") }, "an id this client never sent"},
		"limit": {func([]byte) []byte {
			return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"too many connections"}}` + "\n")
		}, "too many connections"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := client.Dial(context.Background(), peer(t, tc.reply))
			require.NoError(t, err)
			defer c.Close()
			_, err = c.Status(context.Background())
			require.ErrorIs(t, err, client.ErrClosed)
			assert.ErrorContains(t, err, tc.want)
			select {
			case <-c.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("Done was not closed")
			}
			assert.ErrorIs(t, c.Err(), client.ErrClosed)
			_, err = c.Status(context.Background())
			assert.ErrorIs(t, err, client.ErrClosed, "later calls fail at once")
		})
	}
}

// must returns v, panicking on err: a test's decoding of a result it made.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
