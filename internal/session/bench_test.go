package session_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

func benchDB(b *testing.B) *db.DB {
	d, err := db.Open(ctx, filepath.Join(b.TempDir(), "b.db"), db.Options{Sync: db.SyncFull})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return d
}

// seed makes a session holding n tasks, written as one replayed transcript.
func seed(b *testing.B, m *session.Manager, id string, n int) {
	calls := make([]wire.TranscriptCall, n)
	for i := range calls {
		calls[i] = wire.TranscriptCall{Name: tools.TaskCreate, Arguments: json.RawMessage(fmt.Sprintf(`{"subject":"task %d","description":"some details about task %d"}`, i, i))}
	}
	if _, err := m.Replay(ctx, wire.ReplaySession{SessionID: id, Calls: calls}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCompact compacts a session of n tasks; each iteration compacts
// the previous successor, so the store is the same size every time.
func BenchmarkCompact(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			d := benchDB(b)
			m := session.NewManager(d, nil)
			seed(b, m, "gen", n)
			id := "gen"
			for b.Loop() {
				out, err := m.Compact(ctx, wire.Compact{SessionID: id})
				if err != nil {
					b.Fatal(err)
				}
				id = out.Session.ID
			}
		})
	}
}

// BenchmarkResume replays a session of n calls from the database.
func BenchmarkResume(b *testing.B) {
	d := benchDB(b)
	seed(b, session.NewManager(d, nil), "big", 10000)
	for b.Loop() {
		if _, err := session.NewManager(d, nil).Resume(ctx, "big"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCounts reads the counts of a session of 1,000 tasks through the
// tasks view, which computes them from the log.
func BenchmarkCounts(b *testing.B) {
	d, err := db.Open(ctx, filepath.Join(b.TempDir(), "v.db"), db.Options{Sync: db.SyncNormal})
	require.NoError(b, err)
	defer d.Close()
	m := session.NewManager(d, nil)
	calls := make([]wire.TranscriptCall, 1000)
	for i := range calls {
		calls[i] = wire.TranscriptCall{Name: tools.TaskCreate, Arguments: json.RawMessage(fmt.Sprintf(`{"subject":"s%d"}`, i))}
	}
	_, err = m.Replay(ctx, wire.ReplaySession{SessionID: "big", Calls: calls})
	require.NoError(b, err)
	for b.Loop() {
		c, err := d.TaskCounts(ctx, "big")
		if err != nil || c.Total != 1000 {
			b.Fatal(c, err)
		}
	}
}
