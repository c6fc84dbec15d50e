package db_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

// TestReadmeQueries runs every statement of docs/OPERATIONS.md's sql blocks
// against a real database holding a session, a compaction and a failed
// call, and checks each returns rows.
func TestReadmeQueries(t *testing.T) {
	readme, err := os.ReadFile("../../docs/OPERATIONS.md")
	require.NoError(t, err)
	var queries []string
	for _, block := range regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		for _, line := range strings.Split(block[1], "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "--") {
				queries = append(queries, line)
			}
		}
	}
	require.GreaterOrEqual(t, len(queries), 5, "docs/OPERATIONS.md's queries")

	path := t.TempDir() + "/readme.db"
	d := testutil.MustOpenDBAt(t, path)
	m := session.NewManager(d, nil)
	_, err = m.Create(ctx, wire.CreateSession{SessionID: "demo", Title: "demo"})
	require.NoError(t, err)
	for _, c := range []struct{ name, args string }{
		{"TaskCreate", `{"subject":"Read the README"}`},
		{"TaskCreate", `{"subject":"Run the tests"}`},
		{"TaskUpdate", `{"taskid":1,"status":"completed"}`},
		{"TaskUpdate", `{"taskid":7,"status":"completed"}`},
	} {
		_, err := m.Call(ctx, wire.ToolCall{SessionID: "demo", Name: c.name, Arguments: json.RawMessage(c.args)})
		require.NoError(t, err)
	}
	_, err = m.Compact(ctx, wire.Compact{SessionID: "demo", NewSessionID: "demo-2"})
	require.NoError(t, err)

	raw := testutil.RawDB(t, path)
	for _, q := range queries {
		rows, err := raw.Query(q)
		require.NoError(t, err, q)
		n := 0
		for rows.Next() {
			n++
		}
		require.NoError(t, rows.Err(), q)
		rows.Close()
		assert.Positive(t, n, "no rows from %s", q)
	}
}
