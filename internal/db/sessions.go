package db

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

	"github.com/tasksessiond/tasksessiond/internal/record"
	"github.com/tasksessiond/tasksessiond/internal/store"
)

type sessionRow struct {
	ID          string         `db:"id"`
	Title       string         `db:"title"`
	Metadata    string         `db:"metadata"`
	Status      string         `db:"status"`
	ParentID    sql.NullString `db:"parent_id"`
	SuccessorID sql.NullString `db:"successor_id"`
	Snapshot    sql.NullString `db:"snapshot"`
	FromParent  sql.NullBool   `db:"from_parent"`
	CreatedAt   string         `db:"created_at"`
	UpdatedAt   string         `db:"updated_at"`
}

// recordColumns are the sessions row's columns but updated_at, which is
// read as lastActive.
const (
	recordColumns  = `id, title, metadata, status, parent_id, successor_id, created_at`
	sessionColumns = recordColumns + `, updated_at`
)

// lastActive is a session's updated_at as read: the later of the row's own
// (its creation, its seal) and its last logged call's, given the time of
// its last call in the log's tail (NULL for none), or else of the last
// indexed. A call does not rewrite the sessions row: that would dirty a
// page of it in every commit.
func lastActive(tailAt string) string {
	return `max(updated_at, coalesce(` + tailAt + `,
		(SELECT c.created_at FROM log_index i JOIN tool_calls c ON c.rowid = i.call WHERE i.session_id = sessions.id ORDER BY i.seq DESC LIMIT 1),
		'')) AS updated_at`
}

// selectRecordColumns reads sessionColumns, with updated_at as lastActive
// (the tail looked at from its end); selectColumns adds the snapshot,
// which can hold a whole task list: only loading a session needs it. A
// successor whose snapshot is NULL (every one since migration 9) is
// from_parent: it started from its parent's projection.
var (
	selectRecordColumns = recordColumns + `, ` + lastActive(
		`(SELECT c.created_at FROM tool_calls c WHERE c.rowid > (SELECT through_rowid FROM projection_state) AND c.session_id = sessions.id ORDER BY c.rowid DESC LIMIT 1)`)
	selectColumns = selectRecordColumns + `, (SELECT b.snapshot FROM snapshots b WHERE b.session_id = sessions.id) AS snapshot,
		(SELECT b.snapshot IS NULL FROM snapshots b WHERE b.session_id = sessions.id) AS from_parent`
)

func (r sessionRow) session() (record.Session, error) {
	s := record.Session{
		ID: r.ID, Title: r.Title, Metadata: json.RawMessage(r.Metadata), Status: r.Status,
		ParentID: r.ParentID.String, SuccessorID: r.SuccessorID.String,
	}
	var err error
	if s.CreatedAt, err = parseTime("created_at", r.CreatedAt); err != nil {
		return record.Session{}, fmt.Errorf("session %s: %w", r.ID, err)
	}
	if s.UpdatedAt, err = parseTime("updated_at", r.UpdatedAt); err != nil {
		return record.Session{}, fmt.Errorf("session %s: %w", r.ID, err)
	}
	if r.Snapshot.Valid {
		var snap store.Snapshot
		if err := json.Unmarshal([]byte(r.Snapshot.String), &snap); err != nil {
			return record.Session{}, fmt.Errorf("session %s: decode snapshot: %w", r.ID, err)
		}
		s.Snapshot = &snap
	}
	return s, nil
}

// CreateSession inserts s, stamping its times. ErrExists if the id is taken.
func (d *DB) CreateSession(ctx context.Context, s *record.Session) error {
	if s.Snapshot != nil {
		// Its tasks are its parent's: only Compact, which writes both, makes one.
		return fmt.Errorf("create session %s: a session with a snapshot is made by compacting its parent", s.ID)
	}
	tx, err := d.w.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	defer tx.Rollback()
	if err := createSession(ctx, tx, s, d.now()); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create session %s: commit: %w", s.ID, err)
	}
	return nil
}

// createSession inserts s's row; a snapshot, if s has one, is the
// caller's to write.
func createSession(ctx context.Context, tx *sqlx.Tx, s *record.Session, now time.Time) error {
	s.CreatedAt, s.UpdatedAt = now, now
	if s.Status == "" {
		s.Status = record.StatusActive
	}
	if len(s.Metadata) == 0 {
		s.Metadata = json.RawMessage("{}")
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.Title, string(s.Metadata), s.Status, nullString(s.ParentID), nullString(s.SuccessorID),
		formatTime(now), formatTime(now))
	if isUniqueViolation(err) {
		return fmt.Errorf("create session %s: %w", s.ID, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("create session %s: %w", s.ID, err)
	}
	return nil
}

// GetSession returns the session with id, without its snapshot, or
// ErrNotFound.
func (d *DB) GetSession(ctx context.Context, id string) (record.Session, error) {
	return d.getSession(ctx, id, selectRecordColumns)
}

// LoadSession is GetSession with the snapshot, for rebuilding the store.
func (d *DB) LoadSession(ctx context.Context, id string) (record.Session, error) {
	r, err := d.getRow(ctx, id, selectColumns)
	if err != nil {
		return record.Session{}, err
	}
	rec, err := r.session()
	if err != nil || !r.FromParent.Bool {
		return rec, err
	}
	if rec.ParentID == "" {
		return rec, fmt.Errorf("session %s: its snapshot is its parent's projection, but it has no parent", id)
	}
	// Two reads, not one transaction: the successor's row was committed
	// with its parent's seal, after which the projection read here does
	// not change.
	rec.Snapshot, err = parentSnapshot(ctx, d, rec.ParentID)
	return rec, err
}

// parentSnapshot is the store a successor started from: its parent's
// projection, which its compaction brought up to date as it sealed the
// parent.
func parentSnapshot(ctx context.Context, d *DB, parentID string) (*store.Snapshot, error) {
	tasks, err := projectedTasks(ctx, d, parentID)
	if err != nil {
		return nil, err
	}
	snap := &store.Snapshot{Tasks: tasks, NextTaskid: 1}
	if len(tasks) > 0 {
		snap.NextTaskid = tasks[len(tasks)-1].Taskid + 1
	}
	return snap, nil
}

func (d *DB) getSession(ctx context.Context, id, columns string) (record.Session, error) {
	r, err := d.getRow(ctx, id, columns)
	if err != nil {
		return record.Session{}, err
	}
	return r.session()
}

func (d *DB) getRow(ctx context.Context, id, columns string) (sessionRow, error) {
	var r sessionRow
	err := d.q.GetContext(ctx, &r, `SELECT `+columns+` FROM sessions WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("get session %s: %w", id, err)
	}
	return r, nil
}

// Head returns the newest session of id's lineage: id itself when it has
// not been compacted, else the end of its chain of successors, which is the
// session that takes writes.
func (d *DB) Head(ctx context.Context, id string) (string, error) {
	var head string
	err := d.q.GetContext(ctx, &head, `
		WITH RECURSIVE chain(id, successor_id) AS (
			SELECT id, successor_id FROM sessions WHERE id = ?
			UNION
			SELECT s.id, s.successor_id FROM sessions s JOIN chain c ON s.id = c.successor_id
		)
		SELECT id FROM chain WHERE successor_id IS NULL LIMIT 1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("head of session %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("head of session %s: %w", id, err)
	}
	return head, nil
}

// ListFilter selects sessions for ListSessions.
type ListFilter struct {
	Status string // "" for any
	Limit  int
	Cursor string // from a previous page's next cursor
}

// ListSessions returns sessions (without their snapshots) newest first and
// the cursor of the next page ("" when there is none).
func (d *DB) ListSessions(ctx context.Context, f ListFilter) ([]record.Session, string, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	var where []string
	var args []any
	if f.Status != "" {
		where = append(where, "sessions.status = ?")
		args = append(args, f.Status)
	}
	if f.Cursor != "" {
		// A cursor is a rowid this method handed out: positive.
		before, err := strconv.ParseInt(f.Cursor, 10, 64)
		if err != nil || before < 1 {
			return nil, "", fmt.Errorf("list sessions: cursor %q: %w", f.Cursor, ErrBadCursor)
		}
		where = append(where, "sessions.rowid < ?")
		args = append(args, before)
	}
	// The log's tail gathered once for the page rather than scanned once
	// per session.
	q := `SELECT sessions.rowid, ` + recordColumns + `, ` + lastActive(`(SELECT c.created_at FROM tool_calls c WHERE c.rowid = l.last_row)`) + `
		FROM sessions LEFT JOIN (
			SELECT session_id, max(rowid) AS last_row FROM tool_calls
			WHERE rowid > (SELECT through_rowid FROM projection_state) GROUP BY session_id
		) l ON l.session_id = sessions.id`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY sessions.rowid DESC LIMIT ?"
	args = append(args, f.Limit+1)

	var rows []struct {
		RowID int64 `db:"rowid"`
		sessionRow
	}
	if err := d.q.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, "", fmt.Errorf("list sessions: %w", err)
	}
	next := ""
	if len(rows) > f.Limit {
		rows = rows[:f.Limit]
		next = strconv.FormatInt(rows[len(rows)-1].RowID, 10)
	}
	out := make([]record.Session, 0, len(rows))
	for _, r := range rows {
		s, err := r.session()
		if err != nil {
			return nil, "", err
		}
		out = append(out, s)
	}
	return out, next, nil
}

// CountSessions returns the number of sessions in the database.
func (d *DB) CountSessions(ctx context.Context) (int, error) {
	var n int
	if err := d.q.GetContext(ctx, &n, `SELECT count(*) FROM sessions`); err != nil {
		return 0, fmt.Errorf("count sessions: %w", err)
	}
	return n, nil
}

// TaskCounts returns the counts by status of a session's tasks, read from
// the tasks projection.
func (d *DB) TaskCounts(ctx context.Context, sessionID string) (store.Counts, error) {
	all, err := d.TaskCountsOf(ctx, []string{sessionID})
	return all[sessionID], err
}

// TaskCountsOf returns the counts of several sessions in one query (a
// session without tasks is absent from the map: its counts are zero).
func (d *DB) TaskCountsOf(ctx context.Context, ids []string) (map[string]store.Counts, error) {
	out := make(map[string]store.Counts, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	q, args, err := sqlx.In(`SELECT session_id, status, count(*) AS n FROM tasks WHERE session_id IN (?) GROUP BY session_id, status`, ids)
	if err != nil {
		return nil, fmt.Errorf("count tasks: %w", err)
	}
	var rows []struct {
		SessionID string `db:"session_id"`
		Status    string `db:"status"`
		N         int    `db:"n"`
	}
	if err := d.q.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, fmt.Errorf("count tasks: %w", err)
	}
	for _, r := range rows {
		c := out[r.SessionID]
		c.Total += r.N
		switch store.Status(r.Status) {
		case store.Pending:
			c.Pending = r.N
		case store.InProgress:
			c.InProgress = r.N
		case store.Completed:
			c.Completed = r.N
		case store.Deleted:
			c.Deleted = r.N
		}
		out[r.SessionID] = c
	}
	return out, nil
}

// Tasks returns a session's tasks from the projection, in taskid order.
func (d *DB) Tasks(ctx context.Context, sessionID string) ([]store.Task, error) {
	var rows []struct {
		Taskid      int    `db:"taskid"`
		Status      string `db:"status"`
		Subject     string `db:"subject"`
		Description string `db:"description"`
	}
	if err := d.q.SelectContext(ctx, &rows, `SELECT taskid, status, subject, description FROM tasks WHERE session_id = ? ORDER BY taskid`, sessionID); err != nil {
		return nil, fmt.Errorf("tasks of %s: %w", sessionID, err)
	}
	out := make([]store.Task, len(rows))
	for i, r := range rows {
		out[i] = store.Task{Taskid: r.Taskid, Status: store.Status(r.Status), Subject: r.Subject, Description: r.Description}
	}
	return out, nil
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }
