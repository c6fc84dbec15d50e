package pgdb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/tasksessiond/tasksessiond"
)

var _ tasksessiond.ConsistentReader = (*DB)(nil)

// ReadConsistent runs fn over one consistent view of the database (a
// REPEATABLE READ, READ ONLY transaction): a session, its log and its
// messages as they were at one moment, whatever the session's holder
// commits meanwhile. It takes no lease, so looking at a session from any
// daemon never keeps its own host from writing it.
func (d *DB) ReadConsistent(ctx context.Context, fn func(tasksessiond.ReadSource) error) error {
	tx, err := d.x.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("begin a consistent read: %w", err)
	}
	defer tx.Rollback()
	if err := fn(txSource{tx}); err != nil {
		return err
	}
	return tx.Commit()
}

// txSource reads within one transaction.
type txSource struct{ q sqlx.QueryerContext }

func (t txSource) LoadSession(ctx context.Context, id string) (tasksessiond.Session, error) {
	return loadSession(ctx, t.q, id)
}

func (t txSource) EachCall(ctx context.Context, sessionID string, fn func(*tasksessiond.Call) error) error {
	return eachCall(ctx, t.q, sessionID, fn)
}

func (t txSource) Messages(ctx context.Context, sessionID string) ([]tasksessiond.Message, error) {
	return messages(ctx, t.q, sessionID)
}
