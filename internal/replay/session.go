package replay

import (
	"context"
	"errors"
	"fmt"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/store"
)

// ErrSnapshot means a session's snapshot does not restore.
var ErrSnapshot = errors.New("snapshot does not restore")

// Loaded is a session rebuilt from the database.
type Loaded struct {
	Session db.Session // with its snapshot
	Store   *store.Store
	Report  Report
}

// Session rebuilds a session's store as resume does, so that the daemon
// and fsck rebuild it the same way: from its snapshot (a session made by
// compaction) or empty, then its logged calls applied in seq order,
// streamed. each, when not nil, sees every row after it is applied; the
// row's bytes are valid only during that call.
func Session(ctx context.Context, d *db.DB, id string, each func(*db.Call)) (Loaded, error) {
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
	err = d.EachCall(ctx, id, func(row *db.Call) error {
		l.Report.Add(Apply(l.Store, Call{Seq: row.Seq, Name: row.Name, Arguments: row.Arguments, IsError: row.IsError, Result: row.Result}))
		if each != nil {
			each(row)
		}
		return nil
	})
	return l, err
}
