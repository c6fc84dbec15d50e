package pgdb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/pgdb"
	"github.com/tasksessiond/tasksessiond/internal/pgtest"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/wire"
)

// The read benchmark's database: 10,000 sessions and 200,000 logged
// calls, as a fleet's database grows to. 8,000 sessions of 25 calls each
// (12 creates and 13 updates, logged by sessions/replay, one transaction a
// session), of which 2,000 were compacted into a successor holding their
// tasks (its snapshot) and the forced TaskList.
const (
	benchLogged    = 8_000
	benchCalls     = 25
	benchCompacted = 2_000
)

type readBench struct {
	m   *session.Manager
	ids []string
}

var (
	readBenchMu sync.Mutex
	readBenches = map[string]*readBench{}
	// readBenchStorages: the PostgreSQL one, to look at its plans.
	readBenchStorages = map[string]*pgdb.DB{}
)

func benchTranscript(n int) []wire.TranscriptCall {
	calls := make([]wire.TranscriptCall, 0, benchCalls)
	statuses := []string{"in_progress", "completed", "deleted", "pending"}
	for i := range benchCalls {
		if i%2 == 0 && len(calls) < 2*12 {
			calls = append(calls, wire.TranscriptCall{Name: "TaskCreate",
				Arguments: json.RawMessage(fmt.Sprintf(`{"subject":"task %d of %d","description":"what task %d is about"}`, i, n, i))})
			continue
		}
		calls = append(calls, wire.TranscriptCall{Name: "TaskUpdate",
			Arguments: json.RawMessage(fmt.Sprintf(`{"taskid":%d,"status":%q}`, i/2+1, statuses[(i+n)%len(statuses)]))})
	}
	return calls
}

// readBenchOn fills a database once per backend and keeps it for every
// benchmark of the run.
func readBenchOn(b *testing.B, backend string) *readBench {
	readBenchMu.Lock()
	defer readBenchMu.Unlock()
	if rb := readBenches[backend]; rb != nil {
		return rb
	}
	ctx := context.Background()
	var st tasksessiond.Storage
	switch backend {
	case "sqlite":
		d, err := db.Open(ctx, filepath.Join(b.TempDir(), "reads.db"), db.Options{Sync: db.SyncNormal})
		if err != nil {
			b.Fatal(err)
		}
		st = d
	case "postgres":
		srv := pgtest.Shared(b)
		url, err := srv.CreateDB(ctx, "reads")
		if err != nil {
			b.Fatal(err)
		}
		d, err := pgdb.Open(ctx, url, pgdb.Options{Lease: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		st = d
		readBenchStorages[backend] = d
	}
	m := session.NewManager(st, nil)
	start := time.Now()
	rb := &readBench{m: m}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := w; n < benchLogged; n += 4 {
				id := fmt.Sprintf("bench-%05d", n)
				if _, err := m.Replay(ctx, wire.ReplaySession{SessionID: id, Calls: benchTranscript(n)}); err != nil {
					errs <- err
					return
				}
				ids := []string{id}
				if n%(benchLogged/benchCompacted) == 0 {
					succ := id + "-next"
					if _, err := m.Compact(ctx, wire.Compact{SessionID: id, NewSessionID: succ, Summary: "so far"}); err != nil {
						errs <- err
						return
					}
					ids = append(ids, succ)
				}
				mu.Lock()
				rb.ids = append(rb.ids, ids...)
				mu.Unlock()
				if n%500 == w {
					m.EvictIdle(0)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	m.EvictIdle(0)
	if d := readBenchStorages[backend]; d != nil {
		// What autovacuum does after a load like this one.
		if _, err := d.SQL().ExecContext(ctx, `ANALYZE`); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%s: %d sessions, %d calls logged in %s", backend, len(rb.ids), benchLogged*benchCalls+benchCompacted, time.Since(start).Round(time.Millisecond))
	readBenches[backend] = rb
	return rb
}

func BenchmarkFleetReads(b *testing.B) {
	// sessions/get and sessions/list at 10,000 sessions and 200,000 calls,
	// on SQLite and on PostgreSQL: a read's cost must follow the sessions
	// asked for, not the database.
	// go test ./internal/pgdb -run '^$' -bench FleetReads -benchtime 200x
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend+"/get", func(b *testing.B) {
			rb := readBenchOn(b, backend)
			r := rand.New(rand.NewPCG(1, 2))
			for b.Loop() {
				if _, err := rb.m.Get(ctx, rb.ids[r.IntN(len(rb.ids))]); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, limit := range []int{100, 1000} {
			b.Run(fmt.Sprintf("%s/list%d", backend, limit), func(b *testing.B) {
				rb := readBenchOn(b, backend)
				for b.Loop() {
					list, _, err := rb.m.List(ctx, tasksessiond.ListFilter{Limit: limit})
					if err != nil {
						b.Fatal(err)
					}
					if len(list) != limit {
						b.Fatalf("%d sessions listed", len(list))
					}
				}
			})
		}
	}
}
