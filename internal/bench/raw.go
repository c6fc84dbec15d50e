package bench

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/db"
)

// raw measures SQLite alone: the same log rows through the same prepared
// statement, one call per transaction, and batched.
func (b *bencher) raw(ctx context.Context, r *Results) error {
	for _, sync := range []db.Sync{db.SyncFull, db.SyncNormal} {
		if err := b.rawOnce(ctx, sync, []int{1, 100}, r); err != nil {
			return err
		}
	}
	return nil
}

// rawOnce runs the raw inserts under sync, batch rows per commit for each
// of batches, and appends their rates to r.Raw.
func (b *bencher) rawOnce(ctx context.Context, sync db.Sync, batches []int, r *Results) error {
	{
		path := b.path("raw.db")
		d, err := db.Open(ctx, path, db.Options{Sync: sync})
		if err != nil {
			return err
		}
		if err := d.CreateSession(ctx, &tasksessiond.Session{ID: "raw"}); err != nil {
			return err
		}
		d.Close()
		raw, err := sql.Open("sqlite", db.WriterDSN(path, db.Options{Sync: sync}))
		if err != nil {
			return err
		}
		raw.SetMaxOpenConns(1)
		// The daemon's statements, prepared as the daemon prepares them.
		insCall, err := raw.PrepareContext(ctx, db.InsertCallSQL)
		if err != nil {
			return err
		}
		seq := 0
		insert := func(tx *sql.Tx) error {
			seq++
			now := time.Now().UTC().Format(time.RFC3339Nano)
			_, err := tx.StmtContext(ctx, insCall).ExecContext(ctx, "raw", seq, fmt.Sprint("call-", seq), "TaskCreate", rowArgs, false, rowResult, false, now, seq,
				"pending", "Write the parser tests", "Cover the error paths.", int64(seq)) // a checksum's room: raw SQLite does not chain

			return err
		}
		for _, batch := range batches {
			var lat []time.Duration
			rows := 0
			deadline := time.Now().Add(b.sz.phase)
			begin := time.Now()
			for time.Now().Before(deadline) {
				t0 := time.Now()
				tx, err := raw.BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				for range batch {
					if err := insert(tx); err != nil {
						tx.Rollback()
						return err
					}
				}
				if err := tx.Commit(); err != nil {
					return err
				}
				rows += batch
				lat = append(lat, time.Since(t0))
			}
			name := "raw insert, one row per commit"
			if batch > 1 {
				name = fmt.Sprintf("raw insert, %d rows per commit", batch)
			}
			r.Raw = append(r.Raw, Rate{Name: name, Sync: string(sync), PerSec: float64(rows) / time.Since(begin).Seconds(), Latency: percentiles(lat)})
		}
		raw.Close()
	}
	return nil
}
