package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/daemon"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/wire"
)

// compaction times sessions/compact of stores of several sizes, the
// median of five, each compacting the previous successor.
func (b *bencher) compaction(ctx context.Context, r *Results) error {
	d, err := db.Open(ctx, b.path("compact.db"), db.Options{Sync: db.SyncFull})
	if err != nil {
		return err
	}
	defer d.Close()
	m := session.NewManager(d, nil)
	for _, n := range b.sz.compactTasks {
		id := fmt.Sprint("c", n)
		if _, err := m.Replay(ctx, wire.ReplaySession{SessionID: id, Calls: transcript(n, n)}); err != nil {
			return err
		}
		compact := func() (time.Duration, error) {
			t0 := time.Now()
			out, err := m.Compact(ctx, wire.Compact{SessionID: id})
			id = out.Session.ID
			return time.Since(t0), err
		}
		var took []time.Duration
		for range 5 {
			t, err := compact()
			if err != nil {
				return err
			}
			took = append(took, t)
		}
		r.Compaction = append(r.Compaction, Timed{Tasks: n, Took: median(took)})
	}
	return nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// resume shows that resuming a compacted session costs the same whatever
// its ancestor's history.
func (b *bencher) resume(ctx context.Context, r *Results) error {
	path := b.path("resume.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	if err != nil {
		return err
	}
	defer d.Close()
	m := session.NewManager(d, nil)
	tasks := b.sz.replayRows / 10
	long, short := b.sz.replayRows, tasks
	var succ [2]string
	for i, n := range []int{long, short} {
		id := fmt.Sprint("anc", i)
		if _, err := m.Replay(ctx, wire.ReplaySession{SessionID: id, Calls: transcript(n, tasks)}); err != nil {
			return err
		}
		out, err := m.Compact(ctx, wire.Compact{SessionID: id})
		if err != nil {
			return err
		}
		succ[i] = out.Session.ID
	}
	// Both are timed in turn, best of five, after the fresh history has been
	// checkpointed into the database file: otherwise the background
	// checkpoint of those 110,000 calls slows whichever is timed first.
	if err := checkpoint(ctx, path); err != nil {
		return err
	}
	var took [2]time.Duration
	for range 5 {
		for i, id := range succ {
			runtime.GC() // so that neither pays for the other's garbage
			t0 := time.Now()
			if _, err := session.NewManager(d, nil).Resume(ctx, id); err != nil {
				return err
			}
			if t := time.Since(t0); took[i] == 0 || t < took[i] {
				took[i] = t
			}
		}
	}
	r.Resume = ResumeResult{Tasks: tasks, LongAncestor: long, ShortAncestor: short, LongTook: took[0], ShortTook: took[1],
		Ratio: took[0].Seconds() / took[1].Seconds()}
	return nil
}

// checkpoint copies the whole WAL into the database file and empties it.
func checkpoint(ctx context.Context, path string) error {
	raw, err := sql.Open("sqlite", db.WriterDSN(path, db.Options{Sync: db.SyncNormal}))
	if err != nil {
		return err
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// startup times opening a database of many sessions and serving a first request.
func (b *bencher) startup(ctx context.Context, r *Results) error {
	path := b.path("startup.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	if err != nil {
		return err
	}
	d.Close()
	raw, err := sql.Open("sqlite", db.WriterDSN(path, db.Options{Sync: db.SyncNormal}))
	if err != nil {
		return err
	}
	_, err = raw.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO sessions (id, title, created_at, updated_at) SELECT 'sess-' || i, 'bench', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z' FROM n;
		INSERT INTO log_heads (session_id, seq, checksum) SELECT id, 0, 0 FROM sessions`, b.sz.startupSession)
	raw.Close()
	if err != nil {
		return err
	}
	// The daemon starts as `tasksessiond serve` starts it.
	t0 := time.Now()
	rd, err := start(ctx, daemon.Config{DB: path, Socket: b.path("s.sock"), Sync: db.SyncFull})
	if err != nil {
		return err
	}
	c, err := client.Dial(ctx, rd.socket)
	if err == nil {
		_, err = c.GetSession(ctx, "sess-1")
		c.Close()
	}
	took := time.Since(t0)
	err = errors.Join(err, rd.stop())
	r.Startup = StartupResult{Sessions: b.sz.startupSession, Took: took}
	return err
}
