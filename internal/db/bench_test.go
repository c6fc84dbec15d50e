package db_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/db"
)

// BenchmarkAppendCalls measures the writer alone: 64 sessions each logging
// one call at a time, as the daemon's sessions do, with rows of a usual
// TaskCreate's size; ns/op is per call.
func BenchmarkAppendCalls(b *testing.B) {
	for _, sync := range []db.Sync{db.SyncFull, db.SyncNormal} {
		b.Run(string(sync), func(b *testing.B) {
			d, err := db.Open(ctx, filepath.Join(b.TempDir(), "b.db"), db.Options{Sync: sync})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			benchAppends(b, d, 64)
		})
	}
}

func benchAppends(b *testing.B, d *db.DB, sessions int) {
	args := json.RawMessage(`{"subject":"Step 1: write the parser tests","description":"Cover the error paths of the config parser: missing keys, wrong types and a file that is not UTF-8; run them under -race."}`)
	result := json.RawMessage(`{"content":[{"type":"text","text":"Created task 21: Step 1: write the parser tests. 21 open (20 pending, 1 in progress), 0 completed."}],"structuredContent":{"task":{"taskid":21,"status":"pending","subject":"Step 1: write the parser tests"},"counts":{"pending":20,"inprogress":1,"completed":0}}}`)
	for i := range sessions {
		if err := d.CreateSession(ctx, &tasksessiond.Session{ID: fmt.Sprint("s", i)}); err != nil {
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
			var prev int64 // the row before's checksum, as the manager passes it
			for seq := int64(1); next.Add(1) <= int64(b.N); seq++ {
				a := []tasksessiond.Append{{Call: tasksessiond.Call{SessionID: id, Seq: seq, CallID: fmt.Sprint("c", seq), Name: "TaskCreate", Arguments: args, Result: result},
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
