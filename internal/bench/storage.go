package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"time"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/record"
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
	VsV1          float64 `json:"vsV1,omitempty"`
}

// Storage-ceiling parameters: the daemon at 64 sessions commits groups of
// 26 to 28 calls.
const (
	storageSessions = 64
	storageGroup    = 32
	storageWALLimit = 16 << 20 // as the daemon bounds its WAL
)

// v1TouchSQL is the statement the daemon ran once per session per commit
// before version 0.2 (it stamped sessions.updated_at); kept here, with the
// callId index, so that the old write pattern runs beside the new one.
const (
	v1TouchSQL   = `UPDATE sessions SET updated_at = ? WHERE id = ?`
	v1CallIDSQL  = `CREATE UNIQUE INDEX tool_calls_call_id ON tool_calls (session_id, call_id) WHERE call_id IS NOT NULL`
	floorTable   = `CREATE TABLE floor (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, seq INTEGER NOT NULL, result TEXT NOT NULL)`
	floorInsertQ = `INSERT INTO floor (session_id, seq, result) VALUES (?, ?, ?)`
)

// storageRow is a TaskCreate's result as the daemon logs it today, with the
// overview of a list holding ten open tasks.
var storageRow = func() string {
	st := store.New()
	var res tools.Result
	for i := range 11 {
		c, err := tools.Decode(tools.TaskCreate, []byte(fmt.Sprintf(`{"subject":"Write the parser tests, part %d","description":"Cover the error paths."}`, i)))
		if err != nil {
			panic(err)
		}
		res, _ = tools.Execute(st, c)
	}
	return mustJSON(res)
}()

// storageRounds is how many times each pattern runs, in turn with the
// others, so that a machine's load drifting over the run weighs on all
// three alike.
const storageRounds = 3

// storage measures the three write patterns side by side, under full sync.
func (b *bencher) storage(ctx context.Context, r *Results) error {
	patterns := []writePattern{
		{name: "v1: log + callId index + projection + session touch", callID: true, projection: true, touch: true},
		{name: "now: log, projection every 100 ms", deferred: true},
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
				if err := d.CreateSession(ctx, &record.Session{ID: fmt.Sprint("s", s)}); err != nil {
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
		r.Storage[i].VsV1 = r.Storage[i].PerSec / r.Storage[0].PerSec
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
	name       string
	callID     bool // a unique index on (session_id, call_id)
	projection bool // the task's projection row in the same transaction
	touch      bool // the session's updated_at rewritten
	deferred   bool // the projection written every 100 ms, as the writer did
	floor      bool // an append-only table of (session, seq, result) only
}

func (b *bencher) storagePhase(ctx context.Context, raw *sql.DB, path string, p writePattern) (phaseTotals, error) {
	var setup []string
	if p.callID {
		setup = append(setup, v1CallIDSQL)
	}
	if p.floor {
		setup = append(setup, floorTable)
	}
	for _, q := range setup {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			return phaseTotals{}, err
		}
	}
	stmt := func(q string) (*sql.Stmt, error) { return raw.PrepareContext(ctx, q) }
	insCall, err := stmt(db.InsertCallSQL)
	if err != nil {
		return phaseTotals{}, err
	}
	insTask, err := stmt(db.UpsertTaskSQL)
	if err != nil {
		return phaseTotals{}, err
	}
	touchSession, err := stmt(v1TouchSQL)
	if err != nil {
		return phaseTotals{}, err
	}
	insFloor := insCall
	if p.floor {
		if insFloor, err = stmt(floorInsertQ); err != nil {
			return phaseTotals{}, err
		}
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
	// The deferred projection, as the daemon's writer runs it: the latest
	// state of each changed task, and each session's mark, in one
	// transaction every 100 ms.
	dirty := map[[2]int64]bool{}
	lastProjection := time.Now()
	project := func() error {
		tx, err := raw.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
		sessions := map[int64]bool{}
		for k := range dirty {
			if _, err := tx.StmtContext(ctx, insTask).ExecContext(ctx, fmt.Sprint("s", k[0]), k[1], "pending", "Write the parser tests", "Cover the error paths.", now, now); err != nil {
				tx.Rollback()
				return err
			}
			sessions[k[0]] = true
		}
		for s := range sessions {
			if _, err := tx.ExecContext(ctx, `UPDATE sessions SET projected_seq = ? WHERE id = ?`, seqs[s], fmt.Sprint("s", s)); err != nil {
				tx.Rollback()
				return err
			}
		}
		clear(dirty)
		lastProjection = time.Now()
		return tx.Commit()
	}
	deadline := time.Now().Add(b.sz.phase)
	begin := time.Now()
	for time.Now().Before(deadline) {
		tx, err := raw.BeginTx(ctx, nil)
		if err != nil {
			return phaseTotals{}, err
		}
		now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
		touched := map[int]bool{}
		for range storageGroup {
			s := calls % storageSessions
			seqs[s]++
			sid := fmt.Sprint("s", s)
			if p.floor {
				_, err = tx.StmtContext(ctx, insFloor).ExecContext(ctx, sid, seqs[s], storageRow)
			} else {
				_, err = tx.StmtContext(ctx, insCall).ExecContext(ctx, sid, seqs[s], fmt.Sprintf("c-%d-%d", s, seqs[s]), "TaskCreate", rowArgs, false, storageRow, false, now, seqs[s],
					"pending", "Write the parser tests", "Cover the error paths.")
			}
			if err == nil && p.projection {
				_, err = tx.StmtContext(ctx, insTask).ExecContext(ctx, sid, seqs[s], "pending", "Write the parser tests", "Cover the error paths.", now, now)
			}
			if err != nil {
				tx.Rollback()
				return phaseTotals{}, err
			}
			touched[s] = true
			if p.deferred {
				dirty[[2]int64{int64(s), seqs[s]}] = true
			}
			calls++
		}
		if p.touch {
			for s := range touched {
				if _, err := tx.StmtContext(ctx, touchSession).ExecContext(ctx, now, fmt.Sprint("s", s)); err != nil {
					tx.Rollback()
					return phaseTotals{}, err
				}
			}
		}
		if err := tx.Commit(); err != nil {
			return phaseTotals{}, err
		}
		if p.deferred && time.Since(lastProjection) >= 100*time.Millisecond {
			if err := project(); err != nil {
				return phaseTotals{}, err
			}
		}
		if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > storageWALLimit {
			if err := truncate(); err != nil {
				return phaseTotals{}, err
			}
		}
	}
	if p.deferred {
		if err := project(); err != nil {
			return phaseTotals{}, err
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
