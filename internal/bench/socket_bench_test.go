package bench

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/wire"
)

// BenchmarkSessions64 drives 64 sessions over the socket under --sync full,
// each keeping 20 open tasks as the bench's agent mix does, for profiling
// the daemon's busiest path alone.
func BenchmarkSessions64(b *testing.B) {
	ctx := context.Background()
	dir, err := TempDir() // private, as the daemon wants its socket's directory
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bb := &bencher{cfg: Config{Dir: dir}, sz: sizes{phase: time.Second}}
	dm, err := bb.startDaemon(ctx, db.SyncFull)
	if err != nil {
		b.Fatal(err)
	}
	defer dm.stop()
	for b.Loop() {
		// Fresh sessions each round, as the mix's callIds repeat.
		ids, err := seeded(ctx, dm.socket, 64, openTasks)
		if err != nil {
			b.Fatal(err)
		}
		rate, _, err := bb.drive(ctx, dm.socket, 64, agentMix(ctx, ids))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(rate, "calls/s")
	}
}

// BenchmarkCompactOverSocket compacts a session of 10,000 tasks (half of
// them completed) over the socket, end to end, as the bench's side-by-side
// part does; ns/op is one compaction.
func BenchmarkCompactOverSocket(b *testing.B) {
	ctx := context.Background()
	dir, err := TempDir()
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bb := &bencher{cfg: Config{Dir: dir}}
	dm, err := bb.startDaemon(ctx, db.SyncFull)
	if err != nil {
		b.Fatal(err)
	}
	defer dm.stop()
	c, err := client.Dial(ctx, dm.socket)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	id := "big"
	if _, err := c.CreateSession(ctx, wire.CreateSession{SessionID: id}); err != nil {
		b.Fatal(err)
	}
	if err := fillBig(ctx, c, id); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		out, err := c.Compact(ctx, wire.Compact{SessionID: id})
		if err != nil {
			b.Fatal(err)
		}
		id = out.Session.ID
	}
}
