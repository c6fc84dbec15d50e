package db

import (
	"context"
	"database/sql/driver"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/tasksessiond/tasksessiond"
)

// The write-ahead log: checkpoints, run by the writer goroutine between
// commits, and the bound on its size.

// checkpointInterval is how often the WAL is copied back into the database
// file. Doing it here keeps that work (and its fsyncs) out of commits.
const checkpointInterval = 250 * time.Millisecond

// ckptWatch is what the checkpointer remembers between runs, so that it
// says each thing once rather than every 250 ms.
type ckptWatch struct {
	lastErr string
	warned  bool
}

func (d *DB) checkpointOnce(ctx context.Context, w *ckptWatch) {
	if d.checkFile() != nil {
		return // said once; a checkpoint into the unlinked file helps no one
	}
	st, err := d.checkpoint(ctx)
	switch {
	case err != nil && err.Error() != w.lastErr:
		d.log.Warn("checkpoint failed; the WAL grows until one succeeds", slog.Any("err", err))
		w.lastErr = err.Error()
		return
	case err != nil:
		return
	case w.lastErr != "":
		d.log.Info("checkpoints succeed again")
		w.lastErr = ""
	}
	// What the log holds since its last restart; none once all of it is
	// copied back, as the next commit then starts it again (the counts
	// stay those of the old log until that commit).
	d.wr.walLog = int64(st.Frames) * walFrame
	if st.Frames == st.Checkpointed {
		d.wr.walLog = 0
	}
	// Everything copied back, but the file still as large as it grew while
	// a reader pinned it: give the space back now, not at the next write
	// (there may be none for a long while).
	if st.Frames == st.Checkpointed && st.Bytes > d.wr.walLimit*3/2 {
		d.emptyWAL("TRUNCATE")
	}
	// Frames a checkpoint cannot copy back are pinned by a reader (a long
	// transaction, say an open sqlite3 shell): say so once.
	pinned := int64(st.Frames-st.Checkpointed) * pageSize
	if pinned > d.walWarn && !w.warned {
		d.log.Warn("the WAL cannot be checkpointed: a reader is holding an old snapshot (an open transaction in a sqlite3 shell?)",
			slog.Int64("walBytes", st.Bytes), slog.Int("frames", st.Frames), slog.Int("checkpointed", st.Checkpointed))
		w.warned = true
	} else if pinned < d.walWarn/2 {
		w.warned = false
	}
}

// checkpoint runs one passive checkpoint and records what it found. It
// runs on the writer goroutine, between commits, on the writer's own
// connection: one owner for every write and checkpoint, so no checkpoint
// ever waits for, or is refused by, another.
func (d *DB) checkpoint(ctx context.Context) (tasksessiond.WAL, error) {
	var busy int
	var st tasksessiond.WAL
	if err := d.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &st.Frames, &st.Checkpointed); err != nil {
		return tasksessiond.WAL{}, fmt.Errorf("wal_checkpoint: %w", err)
	}
	if fi, err := os.Stat(d.path + "-wal"); err == nil {
		st.Bytes = fi.Size()
	}
	d.wal.Store(&st)
	return st, nil
}

// WAL returns the write-ahead log's state as the last background
// checkpoint found it (zero before the first).
func (d *DB) WAL() tasksessiond.WAL {
	if st := d.wal.Load(); st != nil {
		return *st
	}
	return tasksessiond.WAL{}
}

// walFrame is the size of a frame of the WAL: a page and its header.
const walFrame = pageSize + 24

// boundWAL restarts the WAL once it holds more than its limit. Passive
// checkpoints beside a writer that never pauses do not catch up, so the
// WAL never restarts and grows without bound; here, between two group
// commits, nothing else writes, and a RESTART checkpoint copies the log
// back so that the next commit writes it again from its start. The file
// is not truncated: writing over frames already on disk makes a commit's
// fsync cheaper than appending to a file that grows (about 300 against 450
// µs here), and journal_size_limit keeps it near the limit. How much the
// log holds is counted as the commits add to it, and read back from each
// periodic checkpoint, rather than asked of the file system.
func (d *DB) boundWAL() {
	if d.wr.walLog >= d.wr.walNext {
		d.emptyWAL("RESTART")
	}
}

// emptyWAL runs a checkpoint of mode (RESTART, or TRUNCATE to give the
// file's space back). It waits for readers only briefly: a reader that
// pins an old snapshot (a long sqlite3 transaction) makes it give up, and
// it tries again only after the WAL has grown by another limit's worth.
func (d *DB) emptyWAL(mode string) {
	ctx := context.Background()
	// The writer pool's one connection, held for the three statements so
	// that no other transaction runs with the short timeout.
	conn, err := d.w.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", walWait.Milliseconds())); err != nil {
		d.log.Warn("emptying the WAL: setting a short busy_timeout failed", slog.Any("err", err))
		return
	}
	defer func() {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", d.wr.busyTimeout.Milliseconds())); err != nil {
			// A writer left with the short timeout would fail commits that
			// should wait: the pool drops it and opens a new one.
			d.log.Error("restoring the writer's busy_timeout failed; replacing its connection", slog.Any("err", err))
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	var busy, frames, done int
	err = conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &frames, &done)
	switch {
	case err != nil || busy != 0:
		// A reader pins the log (checkpoints run on this goroutine, so it
		// is not one of ours). Try again after more writes, less and less
		// often; the periodic checkpoint empties it once the reader goes.
		d.wr.walStep = min(max(2*d.wr.walStep, d.wr.walLimit/8), 4*d.wr.walLimit)
		d.wr.walNext = d.wr.walLog + d.wr.walStep
		if err != nil {
			d.log.Warn("emptying the WAL failed", slog.String("checkpoint", mode), slog.Any("err", err), slog.Int64("walBytes", d.wr.walLog))
		} else if d.wr.walStep == 4*d.wr.walLimit {
			d.log.Info("the WAL is past its limit but a reader holds it; trying again later",
				slog.Int64("walBytes", d.wr.walLog), slog.Int("frames", frames), slog.Int("checkpointed", done))
		}
	default:
		d.wr.walLog, d.wr.walNext, d.wr.walStep = 0, d.wr.walLimit, 0
	}
}
