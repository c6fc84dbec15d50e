package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/store"
)

// ErrSnapshot means a session's snapshot does not restore.
var ErrSnapshot = errors.New("snapshot does not restore")

// Loaded is a session rebuilt from the database.
type Loaded struct {
	Session tasksessiond.Session // with its snapshot
	Store   *store.Store
	Report  tasksessiond.ReplayReport
}

// Options tune Session.
type Options struct {
	// Each, when not nil, sees every row after it is applied; the row's
	// bytes are valid only during that call, and its Result is kept for
	// the forced TaskList only.
	Each func(*tasksessiond.Call)
	// CheckAll compares every write's recorded task, not only the creates'.
	CheckAll bool
}

// Session rebuilds a session's store as resume does: from its snapshot (a
// session made by compaction) or empty, then its logged calls applied in
// seq order. The log is read on a goroutine of its own, a batch at a time,
// while this one decodes and applies the calls: reading a row and applying
// it cost about the same, so on two cores a load takes about the longer of
// the two rather than their sum.
func Session(ctx context.Context, d tasksessiond.Source, id string, o Options) (Loaded, error) {
	rec, err := d.LoadSession(ctx, id)
	if err != nil {
		return Loaded{}, err
	}
	if err := lineage(rec); err != nil {
		return Loaded{Session: rec}, err
	}
	l := Loaded{Session: rec, Store: store.New()}
	if rec.Snapshot != nil {
		if l.Store, err = store.Restore(*rec.Snapshot); err != nil {
			return Loaded{Session: rec}, fmt.Errorf("session %s: %w: %w", id, ErrSnapshot, err)
		}
	}
	step := Apply
	if o.CheckAll {
		step = Check
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []tasksessiond.Call, 2)
	read := make(chan error, 1)
	go func() {
		defer close(batches)
		read <- readBatches(ctx, d, rec, batches)
	}()
	for batch := range batches {
		for i := range batch {
			row := &batch[i]
			step(l.Store, Call{Seq: row.Seq, Name: row.Name, Arguments: row.Arguments, IsError: row.IsError, Change: row.Change}).Count(&l.Report)
			if o.Each != nil {
				o.Each(row)
			}
		}
	}
	return l, <-read
}

// lineage refuses a session whose record and snapshot disagree: only a
// compaction writes a snapshot, and it names the parent. Served anyway, a
// successor without its snapshot would lose its parent's tasks, and one
// without its parent the callIds its parent answered (exactly-once).
func lineage(rec tasksessiond.Session) error {
	switch {
	case rec.ParentID != "" && rec.Snapshot == nil:
		return fmt.Errorf("session %s: %w: it was compacted from %s but its snapshot (the tasks it started from) is gone", rec.ID, tasksessiond.ErrDamaged, rec.ParentID)
	case rec.ParentID == "" && rec.Snapshot != nil:
		return fmt.Errorf("session %s: %w: it has a snapshot, which only a compaction writes, but no session is its parent", rec.ID, tasksessiond.ErrDamaged)
	}
	return nil
}

// readBatch is how many rows go to the applier at a time.
const readBatch = 256

// readBatches sends a session's log to out in batches, each row's bytes
// copied out of the driver's buffers, having checked each row's checksum
// (when the storage keeps a chain): the log is trusted only once it
// checks, so a row that fails stops the load, and the rows sent before it
// are discarded with the session.
func readBatches(ctx context.Context, d tasksessiond.Source, rec tasksessiond.Session, out chan<- []tasksessiond.Call) error {
	id := rec.ID
	var chain *tasksessiond.ChainCheck
	if rec.Log != nil {
		chain = &tasksessiond.ChainCheck{SessionID: id, Head: *rec.Log, Start: tasksessiond.ChainStart(rec.Snapshot)}
	}
	batch := make([]tasksessiond.Call, 0, readBatch)
	send := func() error {
		select {
		case out <- batch:
			batch = make([]tasksessiond.Call, 0, readBatch)
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err := d.EachCall(ctx, id, func(row *tasksessiond.Call) error {
		if chain != nil {
			if err := chain.Row(row); err != nil {
				return err
			}
		}
		c := *row
		c.Arguments = bytes.Clone(row.Arguments)
		c.Result = nil
		if row.Forced { // replay needs no other result
			c.Result = bytes.Clone(row.Result)
		}
		batch = append(batch, c)
		if len(batch) < readBatch {
			return nil
		}
		return send()
	})
	if err == nil && chain != nil {
		err = chain.End()
	}
	if err == nil && len(batch) > 0 {
		err = send()
	}
	return err
}
