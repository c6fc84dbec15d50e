package pgdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/sqlscan"
)

// A session's updated_at is read as the later of its row's own and its
// last call's, as on SQLite: a call does not rewrite the sessions row.
//
// The lineage is read both ways, as on SQLite, so that one column edited
// by hand changes nothing the daemon does: a session is sealed when its
// status says so, when it names a successor, or when another session names
// it as its parent; its parent is its parent_id, or else the session whose
// successor_id names it; its successor likewise.
const (
	recordColumns = `id, title, metadata, ` + lineageStatus + ` AS status,
		coalesce(parent_id, (SELECT p.id FROM sessions p WHERE p.successor_id = sessions.id ORDER BY p.n LIMIT 1)) AS parent_id,
		coalesce(successor_id, ` + successorOf + `) AS successor_id, created_at,
		greatest(updated_at, (SELECT c.created_at FROM tool_calls c WHERE c.session_id = sessions.id ORDER BY c.seq DESC LIMIT 1)) AS updated_at`
	lineageStatus = `CASE WHEN sessions.successor_id IS NOT NULL OR EXISTS (SELECT 1 FROM sessions c WHERE c.parent_id = sessions.id)
		THEN 'compacted' ELSE sessions.status END`
	successorOf = `(SELECT c.id FROM sessions c WHERE c.parent_id = sessions.id ORDER BY c.n LIMIT 1)`
)

// scanSession reads the columns of recordColumns into a Session, after
// dest.
func scanSession(sc sqlscan.Row, dest ...any) (tasksessiond.Session, error) {
	var s tasksessiond.Session
	err := sc.Scan(append(dest, &s.ID, &s.Title, (*sqlscan.JSON)(&s.Metadata), &s.Status, (*sqlscan.NullText)(&s.ParentID),
		(*sqlscan.NullText)(&s.SuccessorID), &s.CreatedAt, &s.UpdatedAt)...)
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	return s, err
}

// CreateSession inserts s, stamping its times; tasksessiond.ErrExists if the id is taken.
func (d *DB) CreateSession(ctx context.Context, s *tasksessiond.Session) error {
	if s.Snapshot != nil {
		return fmt.Errorf("create session %s: a session with a snapshot is made by compacting its parent", s.ID)
	}
	return d.createSession(ctx, d.x, s, d.now())
}

// createSession inserts s's row and its log's head (seq 0 and the chain's
// start: its snapshot's, for a successor) in one statement, so that a
// session without a head is damage, never an empty log; and only while
// no newer daemon has migrated the database (schema.go).
func (d *DB) createSession(ctx context.Context, x sqlx.ExecerContext, s *tasksessiond.Session, now time.Time) error {
	s.CreatedAt, s.UpdatedAt = now, now
	if s.Status == "" {
		s.Status = tasksessiond.SessionActive
	}
	if len(s.Metadata) == 0 {
		s.Metadata = json.RawMessage("{}")
	}
	res, err := x.ExecContext(ctx, `WITH s AS (INSERT INTO sessions (id, title, metadata, status, parent_id, successor_id, created_at, updated_at)
		SELECT $1, $2, $3, $4, $5, $6, $7, $7 WHERE NOT EXISTS (SELECT 1 FROM goose_db_version WHERE version_id > $9::bigint) RETURNING id)
		INSERT INTO log_heads (session_id, seq, checksum) SELECT id, 0, $8 FROM s`,
		s.ID, s.Title, string(s.Metadata), s.Status, nullString(s.ParentID), nullString(s.SuccessorID), now, tasksessiond.ChainStart(s.Snapshot), d.known)
	if pgCode(err) == uniqueViolation {
		return fmt.Errorf("create session %s: %w", s.ID, tasksessiond.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("create session %s: %w", s.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		if e := d.newerSchema(ctx); e != nil {
			return fmt.Errorf("create session %s: %w", s.ID, e)
		}
		return fmt.Errorf("create session %s: not written (%d rows, %v)", s.ID, n, err)
	}
	return nil
}

// GetSession returns the session without its snapshot, or tasksessiond.ErrNotFound.
func (d *DB) GetSession(ctx context.Context, id string) (tasksessiond.Session, error) {
	return getSession(ctx, d.x, id)
}

// LoadSession is GetSession with the snapshot, for rebuilding the store.
func (d *DB) LoadSession(ctx context.Context, id string) (tasksessiond.Session, error) {
	return loadSession(ctx, d.x, id)
}

func getSession(ctx context.Context, q sqlx.QueryerContext, id string) (tasksessiond.Session, error) {
	s, err := scanSession(q.QueryRowxContext(ctx, `SELECT `+recordColumns+` FROM sessions WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return tasksessiond.Session{}, fmt.Errorf("session %s: %w", id, tasksessiond.ErrNotFound)
	}
	if err != nil {
		return tasksessiond.Session{}, fmt.Errorf("get session %s: %w", id, err)
	}
	return s, nil
}

// loadSession reads a session, the snapshot it started from (the rows of
// snapshot_tasks, which the tasks view reads too, written once, at its
// compaction, with the session's row) and its log's head.
func loadSession(ctx context.Context, q sqlx.QueryerContext, id string) (tasksessiond.Session, error) {
	s, err := getSession(ctx, q, id)
	if err != nil {
		return s, err
	}
	if s.Snapshot, err = snapshotOf(ctx, q, id); err != nil {
		return s, err
	}
	s.Log, err = headOf(ctx, q, id)
	return s, err
}

// snapshotOf is the store a successor started from (nil for a session
// that started empty).
func snapshotOf(ctx context.Context, q sqlx.QueryerContext, id string) (*tasksessiond.Snapshot, error) {
	snap := &tasksessiond.Snapshot{}
	err := q.QueryRowxContext(ctx, `SELECT next_taskid FROM snapshots WHERE session_id = $1`, id).Scan(&snap.NextTaskid)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil // started empty
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot of %s: %w", id, err)
	}
	rows, err := q.QueryContext(ctx, `SELECT taskid, status, subject, coalesce(description, '') FROM snapshot_tasks
		WHERE session_id = $1 ORDER BY taskid`, id)
	if err != nil {
		return nil, fmt.Errorf("snapshot of %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var t tasksessiond.Task
		if err := rows.Scan(&t.Taskid, &t.Status, &t.Subject, &t.Description); err != nil {
			return nil, fmt.Errorf("snapshot of %s: %w", id, err)
		}
		snap.Tasks = append(snap.Tasks, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("snapshot of %s: %w", id, err)
	}
	return snap, nil
}

// Head returns the newest session of id's lineage.
func (d *DB) Head(ctx context.Context, id string) (string, error) {
	var head string
	err := d.x.GetContext(ctx, &head, `
		WITH RECURSIVE chain(id, successor_id) AS (
			SELECT id, coalesce(successor_id, `+successorOf+`) FROM sessions WHERE id = $1
			UNION
			SELECT sessions.id, coalesce(sessions.successor_id, `+successorOf+`) FROM sessions JOIN chain ON sessions.id = chain.successor_id
		)
		SELECT id FROM chain WHERE successor_id IS NULL LIMIT 1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("head of session %s: %w", id, tasksessiond.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("head of session %s: %w", id, err)
	}
	return head, nil
}

// ListSessions returns sessions newest first and the next page's cursor
// ("" when there is none): the creation order number of the page's last.
func (d *DB) ListSessions(ctx context.Context, f tasksessiond.ListFilter) ([]tasksessiond.Session, string, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	var where []string
	var args []any
	if f.Status != "" {
		args = append(args, f.Status)
		where = append(where, fmt.Sprintf(lineageStatus+" = $%d", len(args)))
	}
	if f.Cursor != "" {
		before, err := strconv.ParseInt(f.Cursor, 10, 64)
		if err != nil || before < 1 {
			return nil, "", fmt.Errorf("list sessions: cursor %q: %w", f.Cursor, tasksessiond.ErrBadCursor)
		}
		args = append(args, before)
		where = append(where, fmt.Sprintf("n < $%d", len(args)))
	}
	q := `SELECT n, ` + recordColumns + ` FROM sessions`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	args = append(args, f.Limit+1)
	q += fmt.Sprintf(" ORDER BY n DESC LIMIT $%d", len(args))
	rows, err := d.x.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, "", fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	out := []tasksessiond.Session{} // an empty page is [], not null
	var n int64
	next := ""
	for rows.Next() {
		if len(out) == f.Limit { // one more than the page: there is a next one
			next = strconv.FormatInt(n, 10)
			break
		}
		s, err := scanSession(rows, &n)
		if err != nil {
			return nil, "", fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("list sessions: %w", err)
	}
	return out, next, nil
}

// CountSessions returns the number of sessions.
func (d *DB) CountSessions(ctx context.Context) (int, error) {
	var n int
	if err := d.x.GetContext(ctx, &n, `SELECT count(*) FROM sessions`); err != nil {
		return 0, fmt.Errorf("count sessions: %w", err)
	}
	return n, nil
}

// TaskCounts returns a session's counts by status, from the tasks view.
func (d *DB) TaskCounts(ctx context.Context, sessionID string) (tasksessiond.Counts, error) {
	all, err := d.TaskCountsOf(ctx, []string{sessionID})
	return all[sessionID], err
}

// countsSQL counts the tasks of the sessions asked for by status, as the
// tasks view does, one session after the other: each session's log is
// read through tool_calls_task and its first tasks through snapshot_tasks'
// key, so the cost follows those sessions, whatever the plan the view
// would get. Parameter: the session ids.
const countsSQL = `SELECT i.id AS session_id, t.status, count(*) AS n
	FROM unnest($1::text[]) AS i(id)
	CROSS JOIN LATERAL (
		SELECT (SELECT f.status FROM tool_calls f WHERE f.session_id = i.id AND f.seq = x.last_seq) AS status
		FROM (SELECT c.taskid, max(c.seq) AS last_seq FROM tool_calls c
		      WHERE c.session_id = i.id AND c.taskid IS NOT NULL AND NOT c.is_error GROUP BY c.taskid) x
		UNION ALL
		SELECT b.status FROM snapshot_tasks b
		WHERE b.session_id = i.id
		  AND NOT EXISTS (SELECT 1 FROM tool_calls c WHERE c.session_id = i.id AND c.taskid = b.taskid AND NOT c.is_error)
	) t
	GROUP BY i.id, t.status`

// TaskCountsOf returns several sessions' counts in one query (a session
// without tasks is absent from the map).
func (d *DB) TaskCountsOf(ctx context.Context, ids []string) (map[string]tasksessiond.Counts, error) {
	out := make(map[string]tasksessiond.Counts, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		SessionID string `db:"session_id"`
		Status    string `db:"status"`
		N         int    `db:"n"`
	}
	if err := d.x.SelectContext(ctx, &rows, countsSQL, ids); err != nil {
		return nil, fmt.Errorf("count tasks: %w", err)
	}
	for _, r := range rows {
		c := out[r.SessionID]
		c.Total += r.N
		switch tasksessiond.Status(r.Status) {
		case tasksessiond.Pending:
			c.Pending = r.N
		case tasksessiond.InProgress:
			c.InProgress = r.N
		case tasksessiond.Completed:
			c.Completed = r.N
		case tasksessiond.Deleted:
			c.Deleted = r.N
		}
		out[r.SessionID] = c
	}
	return out, nil
}

// Tasks returns a session's tasks from the tasks view, in taskid order.
func (d *DB) Tasks(ctx context.Context, sessionID string) ([]tasksessiond.Task, error) {
	var rows []struct {
		Taskid      int    `db:"taskid"`
		Status      string `db:"status"`
		Subject     string `db:"subject"`
		Description string `db:"description"`
	}
	if err := d.x.SelectContext(ctx, &rows, `SELECT taskid, status, subject, description FROM tasks WHERE session_id = $1 ORDER BY taskid`, sessionID); err != nil {
		return nil, fmt.Errorf("tasks of %s: %w", sessionID, err)
	}
	out := make([]tasksessiond.Task, len(rows))
	for i, r := range rows {
		out[i] = tasksessiond.Task{Taskid: r.Taskid, Status: tasksessiond.Status(r.Status), Subject: r.Subject, Description: r.Description}
	}
	return out, nil
}

// Messages returns a session's injected messages in order.
func (d *DB) Messages(ctx context.Context, sessionID string) ([]tasksessiond.Message, error) {
	return messages(ctx, d.x, sessionID)
}

func messages(ctx context.Context, q sqlx.QueryerContext, sessionID string) ([]tasksessiond.Message, error) {
	var rows []struct {
		Role    string `db:"role"`
		Kind    string `db:"kind"`
		Content string `db:"content"`
	}
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT role, kind, content FROM messages WHERE session_id = $1 ORDER BY seq`, sessionID); err != nil {
		return nil, fmt.Errorf("messages of %s: %w", sessionID, err)
	}
	out := make([]tasksessiond.Message, len(rows))
	for i, r := range rows {
		out[i] = tasksessiond.Message{Role: r.Role, Kind: r.Kind, Content: r.Content}
	}
	return out, nil
}
