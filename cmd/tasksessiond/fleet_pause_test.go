package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

// fleetCall sends a tools/call and decodes its result's text, the task list
// or task as the tool printed it.
func fleetCall(ctx context.Context, c *client.Client, session, name, args, callID string) (json.RawMessage, error) {
	var raw json.RawMessage
	err := c.Call(ctx, "tools/call", map[string]any{"sessionId": session, "name": name, "arguments": json.RawMessage(args), "callId": callID}, &raw)
	return raw, err
}

// retryWhileLeased runs f until it stops failing with -32006, within bound.
func retryWhileLeased(t *testing.T, bound time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		err := f()
		if err == nil {
			return
		}
		require.ErrorIs(t, err, client.ErrSessionLeased)
		require.True(t, time.Now().Before(deadline), "still leased after %s: %v", bound, err)
		time.Sleep(20 * time.Millisecond) // the lease has yet to expire
	}
}

func TestFleetPausedHolderServesNoStaleRead(t *testing.T) {
	// Ensures a daemon SIGSTOPped past its lease, whose sessions another
	// daemon then took over and wrote, answers no read from its old copy
	// once it runs again: the reads, sent to it while it was stopped and
	// after the other daemon's writes were acknowledged, are answered with
	// the current list (read from the database) or -32006, never the list
	// as it was before the takeover. Without a lease check before answering
	// from memory, the paused daemon answers them from memory before its
	// renewer notices the loss.
	srv := fleetServer(t)
	url, err := srv.CreateDB(context.Background(), "pause")
	require.NoError(t, err)
	const lease = "1s"
	a := startDaemon(t, url, testutil.SocketPath(t), "--lease", lease)
	b := startDaemon(t, url, testutil.SocketPath(t), "--lease", lease)
	ctx := context.Background()
	ca, cb := testutil.DialSocket(t, a.socket), testutil.DialSocket(t, b.socket)
	const sessions = 6
	for i := range sessions {
		id := fmt.Sprintf("p%d", i)
		_, err := ca.CreateSession(ctx, wire.CreateSession{SessionID: id})
		require.NoError(t, err)
		_, err = fleetCall(ctx, ca, id, "TaskCreate", `{"subject":"before"}`, id+"-1")
		require.NoError(t, err)
	}
	// Connections to a made before it stops, one per session.
	conns := make([]net.Conn, sessions)
	for i := range conns {
		conns[i], err = net.Dial("unix", a.socket)
		require.NoError(t, err)
		defer conns[i].Close()
	}

	require.NoError(t, a.cmd.Process.Signal(syscall.SIGSTOP))
	stopped := true
	defer func() {
		if stopped {
			a.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	for i := range sessions {
		id := fmt.Sprintf("p%d", i)
		retryWhileLeased(t, 20*time.Second, func() error {
			_, err := fleetCall(ctx, cb, id, "TaskCreate", `{"subject":"after"}`, id+"-2")
			return err
		})
	}
	// Every session now has task 2 at b, acknowledged. The reads reach a's
	// socket while it is still stopped, so that they are the first thing
	// it does when it runs again.
	for i, nc := range conns {
		req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"sessionId":"p%d","name":"TaskGet","arguments":{"taskid":2}}}`+"\n", i+1, i)
		_, err := nc.Write([]byte(req))
		require.NoError(t, err)
	}
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGCONT))
	stopped = false
	for i, nc := range conns {
		require.NoError(t, nc.SetReadDeadline(time.Now().Add(20*time.Second)))
		line, err := bufio.NewReader(nc).ReadBytes('\n')
		require.NoError(t, err)
		var resp struct {
			Result *struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
			Error *struct {
				Code int64 `json:"code"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(line, &resp), "%s", line)
		if resp.Error != nil {
			assert.Equal(t, client.ErrSessionLeased.Code, resp.Error.Code, "session p%d: %s", i, line)
			continue
		}
		require.NotNil(t, resp.Result, "%s", line)
		assert.False(t, resp.Result.IsError, "session p%d: a stale read, task 2 is missing: %s", i, line)
		assert.Contains(t, string(line), "after", "session p%d", i)
	}
}
