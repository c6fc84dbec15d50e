package pgdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"

	"github.com/tasksessiond/tasksessiond"
)

// The log's chain (see tasksessiond.Summer), as on SQLite: each row's
// checksum column, and log_heads, the session's last seq and checksum,
// written in the statement that logs the row (insertFencedSQL), from the
// session's creation on (seq 0 and its chain's start).

// chainMigration is schema 6: it chains the rows logged before schema 5
// and gives each session its head, as SQLite's migrations 14 and 15 do.
// A session's rows are chained from seq 1 for as long as their seqs run
// without a gap (a gap is damage already: the rows after it are left
// unchained, and the session is refused). A session with rows gets the
// head of its last chained row; a root session without rows its seq-0
// head; a successor without rows none (it is refused either way: its
// forced TaskList is logged with its compaction).
var chainMigration = goose.NewGoMigration(6, &goose.GoFunc{RunTx: chainLogged}, &goose.GoFunc{RunTx: unchainLogged})

func chainLogged(ctx context.Context, tx *sql.Tx) error {
	var ids []string
	rows, err := tx.QueryContext(ctx, `SELECT id FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM log_heads h WHERE h.session_id = s.id) ORDER BY n`)
	if err != nil {
		return fmt.Errorf("chain the log: %w", err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("chain the log: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("chain the log: %w", err)
	}
	for _, id := range ids {
		if err := chainSession(ctx, tx, id); err != nil {
			return err
		}
	}
	return nil
}

func chainSession(ctx context.Context, tx *sql.Tx, id string) error {
	// The reads the daemon loads with, in the migration's transaction.
	q := &sqlx.Tx{Tx: tx}
	snap, err := snapshotOf(ctx, q, id)
	if err != nil {
		return err
	}
	var parent sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT parent_id FROM sessions WHERE id = $1`, id).Scan(&parent); err != nil {
		return fmt.Errorf("chain the log of %s: %w", id, err)
	}
	var seqs, sums []int64
	var summer tasksessiond.Summer
	prev, logged := tasksessiond.ChainStart(snap), false
	err = eachCall(ctx, q, id, func(c *tasksessiond.Call) error {
		logged = true
		if c.Seq != int64(len(seqs))+1 {
			return errGap
		}
		prev = summer.Sum(prev, c)
		seqs, sums = append(seqs, c.Seq), append(sums, prev)
		return nil
	})
	if err != nil && !errors.Is(err, errGap) {
		return fmt.Errorf("chain the log of %s: %w", id, err)
	}
	if len(seqs) > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE tool_calls SET checksum = v.sum FROM unnest($2::bigint[], $3::bigint[]) AS v(seq, sum)
			WHERE tool_calls.session_id = $1 AND tool_calls.seq = v.seq`, id, seqs, sums); err != nil {
			return fmt.Errorf("chain the log of %s: %w", id, err)
		}
	}
	switch {
	case len(seqs) > 0:
		_, err = tx.ExecContext(ctx, `INSERT INTO log_heads (session_id, seq, checksum) VALUES ($1, $2, $3)`, id, seqs[len(seqs)-1], prev)
	case !logged && snap == nil && !parent.Valid:
		_, err = tx.ExecContext(ctx, `INSERT INTO log_heads (session_id, seq, checksum) VALUES ($1, 0, 0)`, id)
	}
	if err != nil {
		return fmt.Errorf("chain the log of %s: its head: %w", id, err)
	}
	return nil
}

var errGap = errors.New("a gap in the seqs")

func unchainLogged(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM log_heads; UPDATE tool_calls SET checksum = NULL`)
	return err
}

// headOf is a session's recorded head, Missing when it has none (which
// the load's check refuses: every session has one from its creation).
func headOf(ctx context.Context, q sqlx.QueryerContext, id string) (*tasksessiond.LogHead, error) {
	var h tasksessiond.LogHead
	err := q.QueryRowxContext(ctx, `SELECT seq, checksum FROM log_heads WHERE session_id = $1`, id).Scan(&h.Seq, &h.Checksum)
	if errors.Is(err, sql.ErrNoRows) {
		return &tasksessiond.LogHead{Missing: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("head of the log of %s: %w", id, err)
	}
	return &h, nil
}
