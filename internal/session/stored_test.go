package session_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestLogStoresAChangeOnce(t *testing.T) {
	// Ensures a write's log row keeps its result once — the structured
	// result, without the text rendered from it — and the status and only
	// the text fields the call set; that a retry gets the result the first
	// call got, byte for byte; and that the tasks view shows a long
	// description whole (the result's echo shortens it).
	path := filepath.Join(t.TempDir(), "s.db")
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	m := session.NewManager(d, nil)
	id := newSession(t, m)
	long := strings.Repeat("a long description ", 60) // 1,140 characters
	for i := range 20 {
		call(t, m, id, tools.TaskCreate, fmt.Sprintf(`{"subject":"step %d","description":"details"}`, i+1))
	}
	p := wire.ToolCall{SessionID: id, Name: tools.TaskCreate, CallID: "c1",
		Arguments: json.RawMessage(`{"subject":"the long one","description":"` + long + `"}`)}
	first, err := m.Call(ctx, p)
	require.NoError(t, err)
	again, err := m.Call(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, string(first), string(again), "a retry gets the recorded result, text included")
	assert.Contains(t, string(first), `"content":[{"type":"text","text":"#21 pending:`)
	call(t, m, id, tools.TaskUpdate, `{"taskid":21,"status":"in_progress"}`)

	raw := testutil.RawDB(t, path)
	var result string
	var desc *string
	require.NoError(t, raw.QueryRow(`SELECT result, description FROM tool_calls WHERE session_id = ? AND call_id = 'c1'`, id).Scan(&result, &desc))
	assert.NotContains(t, result, `"content"`, "the text is rendered from the structured result, not stored")
	assert.LessOrEqual(t, len(result), 1024, "a change at 20 open tasks stores ≤ 1 KB of result: %s", result)
	require.NotNil(t, desc)
	assert.Equal(t, long, *desc, "the change column holds the description whole")
	require.NoError(t, raw.QueryRow(`SELECT description FROM tool_calls WHERE session_id = ? ORDER BY seq DESC LIMIT 1`, id).Scan(&desc))
	assert.Nil(t, desc, "a status change does not store the description again")

	viewed := func() (status, description string) {
		t.Helper()
		require.NoError(t, raw.QueryRow(`SELECT status, description FROM tasks WHERE session_id = ? AND taskid = 21`, id).Scan(&status, &description))
		return status, description
	}
	status, description := viewed()
	assert.Equal(t, "inprogress", status)
	assert.Equal(t, long, description)
}
