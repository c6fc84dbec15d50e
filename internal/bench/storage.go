package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"time"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

// StorageResult is the storage ceiling of one write pattern: SQLite alone,
// with the daemon's pragmas, writing the daemon's rows for 64 interleaved
// sessions in group commits of the daemon's size.
type StorageResult struct {
	Name          string  `json:"name"`
	PerSec        float64 `json:"perSec"`
	FramesPerCall float64 `json:"walFramesPerCall"`
	BytesPerCall  float64 `json:"walBytesPerCall"`
	VsFloor       float64 `json:"vsFloor,omitempty"`
}

// Storage-ceiling parameters: the daemon at 64 sessions commits groups of
// 26 to 28 calls.
const (
	storageSessions = 64
	storageGroup    = 32
	storageWALLimit = 16 << 20 // as the daemon bounds its WAL
)

// The floor: an append-only table of what a call must keep at least.
const (
	floorTable   = `CREATE TABLE floor (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, seq INTEGER NOT NULL, result TEXT NOT NULL)`
	floorInsertQ = `INSERT INTO floor (session_id, seq, result) VALUES (?, ?, ?)`
)

// storageRow is a TaskCreate's result as the daemon logs it today, with the
// overview of a list holding ten open tasks.
var storageRow = func() string {
	st := store.New()
	var res tools.Result
	for i := range 11 {
		c, _, err := tools.Decode(tools.TaskCreate, []byte(fmt.Sprintf(`{"subject":"Write the parser tests, part %d","description":"Cover the error paths."}`, i)), tools.Live)
		if err != nil {
			panic(err)
		}
		res, _ = tools.Execute(st, c)
	}
	return mustJSON(res)
}()

// storageRounds is how many times each pattern runs, in turn with the
// others, so that a machine's load drifting over the run weighs on all
// both alike.
const storageRounds = 3

// storage measures the daemon's write pattern beside the floor, under
// full sync.
func (b *bencher) storage(ctx context.Context, r *Results) error {
	patterns := []writePattern{
		{name: "now: log keyed by (session, seq)"},
		{name: "floor: append-only rows", floor: true},
	}
	totals := make([]phaseTotals, len(patterns))
	for range storageRounds {
		for i, v := range patterns {
			path := b.path("storage.db")
			d, err := db.Open(ctx, path, db.Options{Sync: db.SyncFull})
			if err != nil {
				return err
			}
			for s := range storageSessions {
				if err := d.CreateSession(ctx, &tasksessiond.Session{ID: fmt.Sprint("s", s)}); err != nil {
					d.Close()
					return err
				}
			}
			d.Close()
			raw, err := sql.Open("sqlite", db.WriterDSN(path, db.Options{Sync: db.SyncFull}))
			if err != nil {
				return err
			}
			raw.SetMaxOpenConns(1)
			t, err := b.storagePhase(ctx, raw, path, v)
			raw.Close()
			removeDB(path) // nine of them would hold gigabytes by the end of a full run
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			totals[i].calls += t.calls
			totals[i].frames += t.frames
			totals[i].took += t.took
		}
	}
	for i, t := range totals {
		perCall := float64(t.frames) / float64(t.calls)
		r.Storage = append(r.Storage, StorageResult{Name: patterns[i].name, PerSec: float64(t.calls) / t.took.Seconds(),
			FramesPerCall: perCall, BytesPerCall: perCall * (4096 + 24)})
	}
	for i := range r.Storage {
		r.Storage[i].VsFloor = r.Storage[i].PerSec / r.Storage[len(r.Storage)-1].PerSec
	}
	return nil
}

// phaseTotals is what one storage phase did.
type phaseTotals struct {
	calls, frames int64
	took          time.Duration
}

// writePattern is what one storage pattern writes per call.
type writePattern struct {
	name  string
	floor bool // an append-only table of (session, seq, result) only
}

func (b *bencher) storagePhase(ctx context.Context, raw *sql.DB, path string, p writePattern) (phaseTotals, error) {
	q := db.InsertCallSQL
	if p.floor {
		if _, err := raw.ExecContext(ctx, floorTable); err != nil {
			return phaseTotals{}, err
		}
		q = floorInsertQ
	}
	insert, err := raw.PrepareContext(ctx, q)
	if err != nil {
		return phaseTotals{}, err
	}
	var frames int64
	// A TRUNCATE checkpoint reports an emptied log, so a PASSIVE one
	// counts the frames first.
	truncate := func() error {
		var busy, log, done int64
		if err := raw.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done); err != nil {
			return err
		}
		frames += log
		_, err := raw.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
		return err
	}
	if err := truncate(); err != nil {
		return phaseTotals{}, err
	}
	frames = 0
	seqs := make([]int64, storageSessions)
	calls := 0
	deadline := time.Now().Add(b.sz.phase)
	begin := time.Now()
	for time.Now().Before(deadline) {
		tx, err := raw.BeginTx(ctx, nil)
		if err != nil {
			return phaseTotals{}, err
		}
		now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
		for range storageGroup {
			s := calls % storageSessions
			seqs[s]++
			sid := fmt.Sprint("s", s)
			if p.floor {
				_, err = tx.StmtContext(ctx, insert).ExecContext(ctx, sid, seqs[s], storageRow)
			} else {
				_, err = tx.StmtContext(ctx, insert).ExecContext(ctx, sid, seqs[s], fmt.Sprintf("c-%d-%d", s, seqs[s]), "TaskCreate", rowArgs, false, storageRow, false, now, seqs[s],
					"pending", "Write the parser tests", "Cover the error paths.", int64(seqs[s])) // a checksum's room; the chain's own cost is the side by side's
			}
			if err != nil {
				tx.Rollback()
				return phaseTotals{}, err
			}
			calls++
		}
		if err := tx.Commit(); err != nil {
			return phaseTotals{}, err
		}
		if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > storageWALLimit {
			if err := truncate(); err != nil {
				return phaseTotals{}, err
			}
		}
	}
	took := time.Since(begin)
	if err := truncate(); err != nil {
		return phaseTotals{}, err
	}
	return phaseTotals{calls: int64(calls), frames: frames, took: took}, nil
}

// removeDB deletes a scratch database and the files SQLite and the lock
// keep beside it.
func removeDB(path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
}
