package db

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tasksessiond/tasksessiond/internal/record"
)

// Group commit: AppendCalls hands its rows to one writer goroutine, which
// commits every request queued at that moment in a single transaction and
// then answers each. One fsync then serves many sessions' calls. A lone
// caller is not delayed: the writer never waits for company, it only takes
// what queued up while the previous commit was running.

// maxGroup bounds the requests in one transaction, so that one commit's
// latency stays bounded under a flood.
const maxGroup = 256

type appendReq struct {
	appends []record.Append
	done    chan error
}

// AppendCalls logs the calls and updates the projection in one transaction
// (shared with other callers' concurrent requests), returning once it has
// committed. Nothing of a request is written unless all of it is, and a
// request that fails does not fail the others in its group.
//
// ctx can stop a request only before the writer has taken it: once taken,
// it commits or fails with its group, and the caller hears which. (The
// session manager passes a context that is never cancelled: its memory
// already holds the change.)
func (d *DB) AppendCalls(ctx context.Context, appends []record.Append) error {
	req := &appendReq{appends: appends, done: make(chan error, 1)}
	d.pending.Add(1)
	defer d.pending.Add(-1)
	select {
	case d.appends <- req:
	case <-d.closed:
		return fmt.Errorf("append calls: %w", errClosed)
	case <-ctx.Done():
		return fmt.Errorf("append calls: %w", ctx.Err())
	}
	return <-req.done
}

// writer is the goroutine that owns group commits.
func (d *DB) writer() {
	defer close(d.writerDone)
	ctx := context.Background()
	d.wr.proj = newPendingProjection()
	if err := d.catchUp(ctx); err != nil {
		d.log.Warn("catching up the tasks projection failed; the tasks view stays exact", slog.Any("err", err))
	} else {
		d.wr.tailKnown = true
	}
	tick := time.NewTicker(checkpointInterval)
	defer tick.Stop()
	// idle fires once the writes have paused long enough to project what
	// waits. It is re-armed by what changes that (a commit, a compaction,
	// a run), not by the checkpoint's tick, which would put off forever a
	// pause longer than its period. It runs from the writer's last doing,
	// so the writer's own work (a checkpoint, a RESTART waiting for a
	// reader) can pass for a pause: a call waiting to be committed says it
	// was not one.
	idle := time.NewTimer(time.Hour)
	idle.Stop()
	defer idle.Stop()
	rearm := func() {
		if pause := d.wr.proj.pause(d.wr.projectEvery); pause > 0 {
			idle.Reset(pause)
		} else {
			idle.Stop()
		}
	}
	var ckpt ckptWatch
	for {
		var first *appendReq
		select {
		case <-tick.C:
			d.checkpointOnce(ctx, &ckpt)
			continue
		case first = <-d.appends:
		case <-d.compacted:
			d.wr.proj.snapshots = true
			rearm()
			continue
		case done := <-d.projectNow:
			d.project(ctx)
			rearm()
			close(done)
			continue
		case <-idle.C:
			if d.pending.Load() == 0 {
				d.project(ctx)
			}
			rearm() // what failed or waited is tried again after a pause
			continue
		case <-d.closed:
			d.project(ctx)
			return
		}
		group := []*appendReq{first}
	drain:
		for len(group) < maxGroup {
			select {
			case r := <-d.appends:
				group = append(group, r)
			default:
				break drain
			}
		}
		d.commitGroup(group)
		// The callers just answered were made runnable behind this
		// goroutine, on its P: let them send their replies before it
		// takes the next group, whose inserts and fsync would hold them.
		runtime.Gosched()
		if d.wr.proj.due(d.wr.projectEvery) {
			d.project(ctx)
		}
		rearm()
		d.boundWAL()
		select {
		case <-tick.C: // a writer that never pauses still checkpoints
			d.checkpointOnce(ctx, &ckpt)
		default:
		}
	}
}

// lastSeq is the last seq logged by session. The log has no unique key
// (migration 10): the writer goroutine keeps seq unique per session (the
// lock on the file makes this daemon the database's only writer, and a
// compaction's own transaction logs only a successor's first row), from
// this group's calls, the calls committed since the projector's mark
// (proj.lastSeq), or else the log's index: a session not written since
// the mark has its rows indexed, but for a successor's first row, which
// its compaction logged (a session with none indexed), and, until the
// start-up's catch-up is done, what a previous run left. Only then is the
// log's tail read (a scan of up to a second of calls).
func (d *DB) lastSeq(ctx context.Context, tx *sqlx.Tx, group map[string]int64, session string) (int64, error) {
	if seq, ok := group[session]; ok {
		return seq, nil
	}
	if seq, ok := d.wr.proj.lastSeq[session]; ok {
		return seq, nil
	}
	var seq int64
	if err := tx.GetContext(ctx, &seq, `SELECT CASE WHEN ?2 OR NOT EXISTS (SELECT 1 FROM log_index WHERE session_id = ?1)
			THEN (SELECT coalesce(max(seq), 0) FROM session_log WHERE session_id = ?1)
			ELSE (SELECT coalesce(max(seq), 0) FROM log_index WHERE session_id = ?1) END`, session, !d.wr.tailKnown); err != nil {
		return 0, fmt.Errorf("append calls: last seq of %s: %w", session, err)
	}
	return seq, nil
}

// walWait is how long a truncating checkpoint waits for readers to move
// on. A test lengthens it to hold the writer up.
var walWait = 50 * time.Millisecond

func (d *DB) commitGroup(group []*appendReq) {
	if err := d.appendTx(context.Background(), group); err == nil || len(group) == 1 {
		for _, r := range group {
			r.done <- err
		}
		return
	}
	// One request spoilt the shared transaction: commit each on its own, so
	// only the bad one fails.
	for _, r := range group {
		r.done <- d.appendTx(context.Background(), []*appendReq{r})
	}
}

func (d *DB) appendTx(ctx context.Context, group []*appendReq) error {
	tx, err := d.w.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("append calls: begin: %w", err)
	}
	defer tx.Rollback()
	now := d.now()
	insert := tx.StmtContext(ctx, d.stmts.insertCall)
	next := map[string]int64{} // this group's last seqs, kept once committed
	for _, r := range group {
		for i := range r.appends {
			c := &r.appends[i].Call
			last, err := d.lastSeq(ctx, tx, next, c.SessionID)
			if err != nil {
				return err
			}
			if c.Seq <= last {
				return fmt.Errorf("append call %s/%d (callId %q): %w", c.SessionID, c.Seq, c.CallID, ErrExists)
			}
			if err := appendCall(ctx, insert, &r.appends[i], now); err != nil {
				return err
			}
			next[c.SessionID] = c.Seq
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("append calls: commit: %w", err)
	}
	d.wr.proj.note(group, now)
	// What the commit added to the WAL, counted high: a page of the key's
	// index and the row's bytes per call, and two pages of the table's
	// path per commit (boundWAL restarts the log a little early rather
	// than late; each periodic checkpoint says the true figure).
	d.wr.walLog += 2 * walFrame
	for _, r := range group {
		for _, a := range r.appends {
			d.wr.walLog += int64(walFrame + len(a.Call.Arguments) + len(a.Call.Result))
		}
	}
	return nil
}
