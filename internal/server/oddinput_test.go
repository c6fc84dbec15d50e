package server_test

// Odd input over the socket: what a client may send, and rows edited by hand.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestToolCallWithAStringHoldingAString(t *testing.T) {
	// Ensures a tool's arguments given as a string holding a string get
	// the isError result that tells the model what to fix, not an
	// internal error.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	c := dialRaw(t, d.Socket)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"sessions/create","params":{"sessionId":"s"}}`)
	require.Nil(t, c.recv()["error"])
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"sessionId":"s","name":"TaskCreate","arguments":"\"{}\""}}`)
	resp := c.recv()
	assert.Nil(t, resp["error"], "%v", resp)
}

func TestHandEditedRowLeavesTheSessionAndConnectionServed(t *testing.T) {
	// Ensures a log row edited to a string holding a string neither
	// wedges its session (a replay that failed while holding its lock once
	// kept every later request waiting) nor the connection that asked.
	path := filepath.Join(t.TempDir(), "h.db")
	db1, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	m := session.NewManager(db1, nil)
	_, err = m.Create(ctx, wire.CreateSession{SessionID: "s"})
	require.NoError(t, err)
	_, err = m.Call(ctx, wire.ToolCall{SessionID: "s", Name: tools.TaskCreate, Arguments: json.RawMessage(`{"subject":"a"}`)})
	require.NoError(t, err)
	require.NoError(t, db1.Close())
	raw := testutil.RawDB(t, path)
	_, err = raw.Exec(`UPDATE tool_calls SET arguments = '"\"{}\""' WHERE session_id = 's' AND seq = 1`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	// The daemon (re)started on the file: the first use of the session
	// replays the edited row.
	db2 := testutil.MustOpenDBAt(t, path)
	d2 := testutil.StartDaemon(t, db2)
	c2 := dialRaw(t, d2.Socket)
	c2.send(`{"jsonrpc":"2.0","id":3,"method":"sessions/resume","params":{"sessionId":"s"}}`)
	first := c2.recv()
	t.Logf("first resume: %v", first)
	assert.NotEqual(t, -32603.0, errCode(first), "a panic answered as an internal error")

	c2.send(`{"jsonrpc":"2.0","id":4,"method":"sessions/resume","params":{"sessionId":"s"}}`)
	c2.send(`{"jsonrpc":"2.0","id":5,"method":"daemon/status"}`)
	c2.nc.SetReadDeadline(time.Now().Add(3 * time.Second))
	line, err := bufio.NewReader(c2.r).ReadBytes('\n')
	assert.NoError(t, err, "no answer within 3 s to a second sessions/resume nor to daemon/status behind it (got %q)", line)

	// Another connection is still served.
	c3 := dialRaw(t, d2.Socket)
	c3.send(`{"jsonrpc":"2.0","id":6,"method":"daemon/status"}`)
	assert.Nil(t, c3.recv()["error"])
}

func TestRetryOfHandEditedResultKeepsOneResponseALine(t *testing.T) {
	// Ensures a retry answers a stored result edited by hand (pretty
	// printed, or with bytes that are not UTF-8) in one line of strict
	// JSON, so the client's framing holds.
	for _, result := range []string{"{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\n\"isError\":false}", "{\"content\":[{\"type\":\"text\",\"text\":\"bad \xff\"}],\"isError\":false}"} {
		t.Run(fmt.Sprintf("%.30q", result), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r.db")
			db1, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
			require.NoError(t, err)
			m := session.NewManager(db1, nil)
			_, err = m.Create(ctx, wire.CreateSession{SessionID: "s"})
			require.NoError(t, err)
			_, err = m.Call(ctx, wire.ToolCall{SessionID: "s", Name: tools.TaskCreate, CallID: "c1", Arguments: json.RawMessage(`{"subject":"a"}`)})
			require.NoError(t, err)
			require.NoError(t, db1.Close())
			raw := testutil.RawDB(t, path)
			_, err = raw.Exec(`UPDATE tool_calls SET result = CAST(? AS TEXT) WHERE session_id = 's' AND seq = 1`, []byte(result))
			require.NoError(t, err)
			require.NoError(t, raw.Close())

			d := testutil.StartDaemon(t, testutil.MustOpenDBAt(t, path))
			c := dialRaw(t, d.Socket)
			c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"sessionId":"s","name":"TaskCreate","callId":"c1","arguments":{"subject":"a"}}}`)
			c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
			line, err := c.r.ReadBytes('\n')
			require.NoError(t, err)
			assert.True(t, json.Valid(line), "the response line is not JSON: %q", line)
			assert.True(t, jsontext.Value(bytes.TrimSpace(line)).IsValid(), "the response line is not strict JSON (a json/v2 client refuses it): %q", line)
			// The client goes on: the next answer is the next request's.
			c.send(`{"jsonrpc":"2.0","id":"next","method":"daemon/status"}`)
			line, err = c.r.ReadBytes('\n')
			require.NoError(t, err)
			assert.Contains(t, string(line), `"id":"next"`, "the next line read is not the next response: %q", line)
		})
	}
}
