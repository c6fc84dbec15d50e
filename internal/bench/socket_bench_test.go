package bench

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tasksessiond/tasksessiond/internal/db"
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
