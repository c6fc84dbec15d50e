package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/record"
	"github.com/tasksessiond/tasksessiond/internal/store"
)

// Loading a session after a restart starts from its projection when it
// has one: the tasks as of projected_seq, then the log past it replayed.
// Replaying a long log from its first row is what fsck does, to check
// that the two agree.

// Projected is a session's projection, where loading it can start.
type Projected struct {
	Through int64        // the projection holds the log's effect up to this seq
	Tasks   []store.Task // in taskid order
	Next    int          // the next taskid
	// CallIDs holds the callId of every row up to Through, and Forced the
	// TaskList fired at compaction (nil if none): what the rows not
	// replayed would have given.
	CallIDs map[string]int64
	Forced  *record.Call
}

// LoadProjected returns a session (without its snapshot) and its
// projection; ok is false when it has none to start from (a session with
// no projected rows, or a successor whose first tasks are not projected
// yet), and the log must be replayed from its snapshot and first row.
func (d *DB) LoadProjected(ctx context.Context, id string) (rec record.Session, p Projected, ok bool, err error) {
	err = d.ReadTx(ctx, func(v *DB) error {
		var err error
		if rec, err = v.GetSession(ctx, id); err != nil {
			return err
		}
		var at struct {
			Through   int64         `db:"projected_seq"`
			Snapshot  sql.NullInt64 `db:"snapshot_projected"`
			MaxTaskid sql.NullInt64 `db:"max_taskid"`
		}
		if err := v.q.GetContext(ctx, &at, `SELECT s.projected_seq,
				(SELECT b.projected FROM snapshots b WHERE b.session_id = s.id) AS snapshot_projected,
				(SELECT max(t.taskid) FROM task_projection t WHERE t.session_id = s.id) AS max_taskid
			FROM sessions s WHERE s.id = ?1`, id); err != nil {
			return fmt.Errorf("projection of %s: %w", id, err)
		}
		hasSnapshot := at.Snapshot.Valid
		if hasSnapshot && at.Snapshot.Int64 == 0 || !hasSnapshot && at.Through == 0 {
			return nil
		}
		p = Projected{Through: at.Through, Next: int(at.MaxTaskid.Int64) + 1, CallIDs: map[string]int64{}}
		if p.Tasks, err = projectedTasks(ctx, v, id); err != nil {
			return err
		}
		// One row, built by SQLite: a row per callId would cost more in
		// the driver than in the scan.
		var ids sql.NullString
		if err := v.q.GetContext(ctx, &ids, `SELECT group_concat(seq || ' ' || call_id, char(10)) FROM session_log
			WHERE session_id = ? AND seq <= ? AND call_id IS NOT NULL`, id, at.Through); err != nil {
			return fmt.Errorf("callIds of %s: %w", id, err)
		}
		for line := range strings.SplitSeq(ids.String, "\n") {
			seq, callID, found := strings.Cut(line, " ")
			n, err := strconv.ParseInt(seq, 10, 64)
			if !found || err != nil {
				continue // "" when there are none
			}
			p.CallIDs[callID] = n
		}
		var forced callRow
		// Compaction logs a successor's forced TaskList as its first row.
		err = v.q.GetContext(ctx, &forced, `SELECT `+readCallColumns+` FROM session_log WHERE session_id = ? AND seq = 1 AND forced = 1`, id)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("forced call of %s: %w", id, err)
		default:
			c, err := forced.call()
			if err != nil {
				return err
			}
			p.Forced = &c
		}
		ok = true
		return nil
	})
	return rec, p, ok, err
}

// EachCallAfter is EachCall for the rows past seq after.
func (d *DB) EachCallAfter(ctx context.Context, sessionID string, after int64, fn func(*record.Call) error) error {
	return d.eachCall(ctx, scanCallsAfterSQL, fn, sessionID, after)
}

const scanCallsAfterSQL = `SELECT seq, call_id, name, arguments, is_error, result, forced, taskid, status, subject, description FROM session_log WHERE session_id = ? AND seq > ? ORDER BY seq`

// projectedTasks reads a session's projection, scanning rows directly: at
// 10,000 tasks, sqlx's reflection costs more than the query.
func projectedTasks(ctx context.Context, v *DB, id string) ([]store.Task, error) {
	rows, err := v.q.QueryContext(ctx, `SELECT taskid, status, subject, description FROM task_projection
		WHERE session_id = ? ORDER BY taskid`, id)
	if err != nil {
		return nil, fmt.Errorf("projection of %s: %w", id, err)
	}
	defer rows.Close()
	var tasks []store.Task
	for rows.Next() {
		var t store.Task
		if err := rows.Scan(&t.Taskid, &t.Status, &t.Subject, &t.Description); err != nil {
			return nil, fmt.Errorf("projection of %s: %w", id, err)
		}
		tasks = append(tasks, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("projection of %s: %w", id, err)
	}
	return tasks, nil
}
