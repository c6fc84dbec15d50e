package db

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/tasksessiond/tasksessiond"
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
	appends []tasksessiond.Append
	done    chan error
}

// AppendCalls logs the calls in one transaction (shared with other
// callers' concurrent requests), returning once it has committed. Nothing of a request is written unless all of it is, and a
// request that fails does not fail the others in its group.
//
// ctx can stop a request only before the writer has taken it: once taken,
// it commits or fails with its group, and the caller hears which. (The
// session manager passes a context that is never cancelled: its memory
// already holds the change.)
func (d *DB) AppendCalls(ctx context.Context, appends []tasksessiond.Append) error {
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

// writer is the goroutine that owns group commits, and the checkpoints
// between them.
func (d *DB) writer() {
	defer close(d.writerDone)
	ctx := context.Background()
	tick := time.NewTicker(checkpointInterval)
	defer tick.Stop()
	var ckpt ckptWatch
	for {
		var first *appendReq
		select {
		case <-tick.C:
			d.checkpointOnce(ctx, &ckpt)
			continue
		case first = <-d.appends:
		case <-d.closed:
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
		d.boundWAL()
		select {
		case <-tick.C: // a writer that never pauses still checkpoints
			d.checkpointOnce(ctx, &ckpt)
		default:
		}
	}
}

// walWait is how long a truncating checkpoint waits for readers to move
// on.
const walWait = 50 * time.Millisecond

func (d *DB) commitGroup(group []*appendReq) {
	err := d.appendTx(context.Background(), group)
	var locked *tasksessiond.LockedError
	if err == nil || len(group) == 1 || errors.As(err, &locked) {
		// Locked out, each alone would wait its busy timeout again.
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

func (d *DB) appendTx(ctx context.Context, group []*appendReq) (err error) {
	defer func() { err = d.lockedOut(err) }()
	if err := d.checkFile(); err != nil {
		return fmt.Errorf("append calls: %w", err)
	}
	tx, err := d.w.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("append calls: begin: %w", err)
	}
	defer tx.Rollback()
	now := d.now()
	w := d.logWriter(ctx, tx)
	for _, r := range group {
		for i := range r.appends {
			if err := w.append(ctx, &r.appends[i], now); err != nil {
				return err
			}
		}
	}
	if err := w.flush(ctx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("append calls: commit: %w", err)
	}
	// What the commit added to the WAL, counted high: a page of each
	// index and the row's bytes per call, and two pages of the table's
	// path per commit (boundWAL restarts the log a little early rather
	// than late; each periodic checkpoint says the true figure).
	d.wr.walLog += 2 * walFrame
	for _, r := range group {
		for _, a := range r.appends {
			d.wr.walLog += int64(2*walFrame + len(a.Call.Arguments) + len(a.Call.Result))
		}
	}
	return nil
}
