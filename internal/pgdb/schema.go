package pgdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"

	"github.com/tasksessiond/tasksessiond"
)

// A fleet's daemons share one schema. A daemon refuses to start on a
// database a newer daemon has migrated (migrate); one already running when
// a newer daemon migrates under it writes nothing more: the statements
// that log a call or create a session write only while goose's table
// records no migration past this binary's (the NOT EXISTS on
// goose_db_version in insertFencedSQL, insertLeasedSQL and createSession),
// and the renewer reads the schema every third of a lease and, once it is
// newer, gives up this daemon's leases and takes no more (checkSchema).

// NewerSchemaError is a fleet database a newer daemon has migrated past
// the schema this binary knows.
type NewerSchemaError struct {
	Schema int64 // the database's
	Known  int64 // the newest this binary's migrations make
}

// Unwrap makes it tasksessiond.ErrNewerSchema to errors.Is.
func (e *NewerSchemaError) Unwrap() error { return tasksessiond.ErrNewerSchema }

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("the database is schema %d, this binary knows up to %d: a newer tasksessiond migrated it; upgrade this daemon to the fleet's version (the database is left as it is)", e.Schema, e.Known)
}

// checkSchema reads the database's schema. A newer one than this binary's
// is a *NewerSchemaError, kept from then on: this daemon takes no more
// leases, and the renewer gives up those it holds.
func (d *DB) checkSchema(ctx context.Context) error {
	if e := d.newer.Load(); e != nil {
		return e
	}
	var v sql.NullInt64
	if err := d.x.GetContext(ctx, &v, `SELECT max(version_id) FROM goose_db_version`); err != nil {
		return fmt.Errorf("read the schema version: %w", err)
	}
	if v.Int64 <= d.known {
		return nil
	}
	e := &NewerSchemaError{Schema: v.Int64, Known: d.known}
	if d.newer.CompareAndSwap(nil, e) {
		d.log.Error("a newer tasksessiond migrated the database under this daemon, which writes nothing more and gives up its sessions: upgrade it to the fleet's version",
			slog.Int64("schema", e.Schema), slog.Int64("known", e.Known))
	}
	return d.newer.Load()
}

// newerSchema is checkSchema's *NewerSchemaError, nil for any other
// outcome (a failed read is the caller's usual explanation's business).
func (d *DB) newerSchema(ctx context.Context) *NewerSchemaError {
	var e *NewerSchemaError
	if errors.As(d.checkSchema(ctx), &e) {
		return e
	}
	return nil
}

// giveUpAll gives up every lease this daemon holds and tells the manager,
// so that the fleet's newer daemons serve those sessions at once.
func (d *DB) giveUpAll(ctx context.Context, why error) {
	d.mu.Lock()
	ids := make([]string, 0, len(d.held))
	for id := range d.held {
		ids = append(ids, id)
	}
	d.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	if _, err := d.x.ExecContext(ctx, `DELETE FROM leases WHERE owner = $1`, d.owner); err != nil {
		d.log.Warn("could not give up the leases; they expire on their own", slog.Any("err", err))
	}
	d.lose(ids, why)
}
