package mcpbridge_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/mcpbridge"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func TestAnswersEveryRequestReadBeforeEndOfInput(t *testing.T) {
	// Ensures a client that writes its requests and closes its end at once
	// (`head -3 requests.jsonl | tasksessiond mcp`) gets an answer to each,
	// and every call is made, before the bridge exits.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	b, err := mcpbridge.New(mcpbridge.Config{Socket: d.Socket, SessionID: "piped", Create: true})
	require.NoError(t, err)
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"TaskCreate","arguments":{"subject":"first"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"TaskCreate","arguments":{"subject":"second"}}}
`
	var out testutil.SyncBuffer
	err = b.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(strings.NewReader(in)), Writer: nopWriteCloser{&out}})
	require.NoError(t, err)

	answered := map[float64]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var resp struct {
			ID     float64         `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &resp), line)
		require.Nil(t, resp.Error, line)
		answered[resp.ID] = string(resp.Result)
	}
	require.Len(t, answered, 3, "every request read is answered: %s", out.String())
	assert.NotContains(t, answered[2], `"isError":true`)
	assert.NotContains(t, answered[3], `"isError":true`)
	snap, err := d.Dial(t).Snapshot(ctx, "piped")
	require.NoError(t, err)
	require.Len(t, snap.Tasks, 2, "both calls were made")
	// The SDK runs the calls it has read concurrently, as a host's
	// parallel tool calls are: both are made, in either order.
	assert.ElementsMatch(t, []string{"first", "second"}, []string{snap.Tasks[0].Subject, snap.Tasks[1].Subject})
}
