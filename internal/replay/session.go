package replay

import (
	"context"
	"errors"
	"fmt"

	"github.com/tasksessiond/tasksessiond/internal/record"
	"github.com/tasksessiond/tasksessiond/internal/store"
)

// ErrSnapshot means a session's snapshot does not restore.
var ErrSnapshot = errors.New("snapshot does not restore")

// Loaded is a session rebuilt from the database.
type Loaded struct {
	Session record.Session // with its snapshot
	Store   *store.Store
	Report  Report
}

// Source is what Session reads a session from: package db's *DB.
type Source interface {
	LoadSession(ctx context.Context, id string) (record.Session, error)
	EachCall(ctx context.Context, sessionID string, fn func(*record.Call) error) error
}

// Options tune Session.
type Options struct {
	// Each, when not nil, sees every row after it is applied; the row's
	// bytes are valid only during that call.
	Each func(*record.Call)
	// CheckAll compares every write's recorded task, not only the creates'.
	CheckAll bool
}

// Session rebuilds a session's store as resume does, so that the daemon
// and fsck rebuild it the same way: from its snapshot (a session made by
// compaction) or empty, then its logged calls applied in seq order,
// streamed.
func Session(ctx context.Context, d Source, id string, o Options) (Loaded, error) {
	rec, err := d.LoadSession(ctx, id)
	if err != nil {
		return Loaded{}, err
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
	err = d.EachCall(ctx, id, func(row *record.Call) error {
		l.Report.Add(step(l.Store, Call{Seq: row.Seq, Name: row.Name, Arguments: row.Arguments, IsError: row.IsError, Change: row.Change}))
		if o.Each != nil {
			o.Each(row)
		}
		return nil
	})
	return l, err
}
