package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/session"
)

// BenchmarkSessions64 drives 64 sessions over the socket under --sync full,
// for profiling the daemon's busiest path alone.
func BenchmarkSessions64(b *testing.B) {
	ctx := context.Background()
	bb := &bencher{cfg: Config{Dir: b.TempDir()}, sz: sizes{phase: time.Second}}
	dm, err := bb.startDaemon(ctx, db.SyncFull)
	if err != nil {
		b.Fatal(err)
	}
	defer dm.stop()
	ids := make([]string, 64)
	for i := range ids {
		s, err := dm.mgr.Create(ctx, session.CreateParams{})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = s.ID
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
