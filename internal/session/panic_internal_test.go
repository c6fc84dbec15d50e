package session

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestPanicAfterApplyLeavesMemoryEqualToTheLog(t *testing.T) {
	// Ensures a panic between applying a write in memory and logging it
	// (recovered by the server) drops the session, so the next call
	// replays the log: the unlogged task is not there and its id is
	// given again, instead of memory running ahead of the database.
	ctx := context.Background()
	d, err := db.Open(ctx, filepath.Join(t.TempDir(), "p.db"), db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	m := NewManager(d, nil)
	_, err = m.Create(ctx, wire.CreateSession{SessionID: "s"})
	require.NoError(t, err)
	_, err = m.Call(ctx, wire.ToolCall{SessionID: "s", Name: tools.TaskCreate, Arguments: json.RawMessage(`{"subject":"logged"}`)})
	require.NoError(t, err)

	m.afterExecute = func() { panic("boom") }
	assert.PanicsWithValue(t, "boom", func() {
		m.Call(ctx, wire.ToolCall{SessionID: "s", Name: tools.TaskCreate, Arguments: json.RawMessage(`{"subject":"never logged"}`)})
	})
	m.afterExecute = nil

	out, err := m.Call(ctx, wire.ToolCall{SessionID: "s", Name: tools.TaskCreate, Arguments: json.RawMessage(`{"subject":"after"}`)})
	require.NoError(t, err)
	assert.Contains(t, string(out), "#2 pending:", "the unlogged #2 was dropped with the session")
	got, err := m.Resume(ctx, "s")
	require.NoError(t, err)
	require.Len(t, got.Tasks, 2)
	assert.Equal(t, "after", got.Tasks[1].Subject)
}
