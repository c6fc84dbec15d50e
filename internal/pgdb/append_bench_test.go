package pgdb_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/pgdb"
	"github.com/tasksessiond/tasksessiond/internal/pgtest"
)

// BenchmarkAppend measures the fenced append alone: 16 sessions each
// logging one call at a time, as a daemon's sessions do; ns/op is per
// call.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	d, err := pgdb.Open(ctx, pgtest.NewDB(b), pgdb.Options{Lease: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	const sessions = 16
	for i := range sessions {
		id := fmt.Sprint("s", i)
		if err := d.CreateSession(ctx, &tasksessiond.Session{ID: id}); err != nil {
			b.Fatal(err)
		}
		if err := d.Acquire(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprint("s", i)
			var prev int64
			for seq := int64(1); next.Add(1) <= int64(b.N); seq++ {
				a := []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: id, Seq: seq, Name: "TaskCreate", Arguments: []byte(`{"subject":"Step 1: write the parser tests"}`),
					Result: []byte(`{"structuredContent":{"task":{"taskid":1,"status":"pending","subject":"Step 1: write the parser tests"}}}`)},
					Task: &tasksessiond.Task{Taskid: int(seq), Status: tasksessiond.Pending, Subject: "Step 1: write the parser tests"}, SetSubject: true, Prev: prev}}
				if err := d.AppendCalls(ctx, a); err != nil {
					b.Error(err)
					return
				}
				prev = a[0].Call.Checksum
			}
		}()
	}
	wg.Wait()
}
