package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/db"
)

// BenchmarkSessions64 drives 64 sessions over the socket under --sync full,
// for profiling the daemon's busiest path alone.
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
	c, err := client.Dial(ctx, dm.socket)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ids, err := newSessions(ctx, c, 64)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rate, _, err := bb.drive(ctx, dm.socket, 64, func(c *client.Client, w, i int) error {
			_, err := c.CallTool(ctx, client.ToolCall{SessionID: ids[w], Name: "TaskCreate", Arguments: json.RawMessage(rowArgs), CallID: fmt.Sprintf("b-%d-%d-%d", w, i, time.Now().UnixNano())})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(rate, "calls/s")
	}
}
