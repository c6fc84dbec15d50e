package server_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

func benchDaemon(b *testing.B, sync db.Sync) (*testutil.Daemon, *client.Client) {
	d, err := db.Open(ctx, filepath.Join(b.TempDir(), "b.db"), db.Options{Sync: sync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	dm := testutil.StartDaemon(b, d)
	return dm, dm.Dial(b)
}

// BenchmarkNoop is the transport's ceiling for one sequential client.
func BenchmarkNoop(b *testing.B) {
	_, c := benchDaemon(b, db.SyncFull)
	for b.Loop() {
		if _, err := c.Status(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTaskCreate is one client creating tasks one after another.
func BenchmarkTaskCreate(b *testing.B) {
	for _, sync := range []db.Sync{db.SyncFull, db.SyncNormal} {
		b.Run(string(sync), func(b *testing.B) {
			_, c := benchDaemon(b, sync)
			s, err := c.CreateSession(ctx, wire.CreateSession{})
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				i++
				if _, err := c.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": fmt.Sprint("task ", i)}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
