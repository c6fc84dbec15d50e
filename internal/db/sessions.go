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
	"modernc.org/sqlite"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/sqlscan"
)

// recordColumns are the sessions row's columns but updated_at, which is
// read as lastActive: the later of the row's own (its creation, its seal)
// and its last logged call's. A call does not rewrite the sessions row:
// that would dirty a page of it in every commit.
//
// The lineage is read both ways, so that one column edited by hand changes
// nothing the daemon does (fsck reports the edit): a session is sealed when
// its status says so, when it names a successor, or when another session
// names it as its parent; its parent is its parent_id, or else the session
// whose successor_id names it; its successor likewise.
const (
	recordColumns       = `id, title, metadata, status, parent_id, successor_id, created_at`
	sessionColumns      = recordColumns + `, updated_at`
	selectRecordColumns = `id, title, metadata, ` + lineageStatus + ` AS status,
		coalesce(parent_id, (SELECT p.id FROM sessions p WHERE p.successor_id = sessions.id ORDER BY p.rowid LIMIT 1)) AS parent_id,
		coalesce(successor_id, (SELECT c.id FROM sessions c WHERE c.parent_id = sessions.id ORDER BY c.rowid LIMIT 1)) AS successor_id,
		CASE WHEN created_at GLOB '` + timeGlob + `' THEN created_at ELSE '` + noTime + `' END AS created_at,
		max(CASE WHEN updated_at GLOB '` + timeGlob + `' THEN updated_at ELSE '` + noTime + `' END, coalesce(
		(SELECT c.created_at FROM tool_calls c WHERE c.session_id = sessions.id AND c.created_at GLOB '` + timeGlob + `' ORDER BY c.seq DESC LIMIT 1), '')) AS updated_at`
	// selectRecordColumnsNoLog is selectRecordColumns with updated_at
	// from the sessions row alone: read when the log's pages are so
	// malformed that its last activity cannot be, so that a session whose
	// rows do not read is refused by name (when its log is read) rather
	// than every session's record failing with it.
	selectRecordColumnsNoLog = `id, title, metadata, ` + lineageStatus + ` AS status,
		coalesce(parent_id, (SELECT p.id FROM sessions p WHERE p.successor_id = sessions.id ORDER BY p.rowid LIMIT 1)) AS parent_id,
		coalesce(successor_id, (SELECT c.id FROM sessions c WHERE c.parent_id = sessions.id ORDER BY c.rowid LIMIT 1)) AS successor_id,
		CASE WHEN created_at GLOB '` + timeGlob + `' THEN created_at ELSE '` + noTime + `' END AS created_at,
		CASE WHEN updated_at GLOB '` + timeGlob + `' THEN updated_at ELSE '` + noTime + `' END AS updated_at`
	// timeGlob matches a time as formatTime writes it; a time column edited
	// to anything else is read as noTime (the zero time) in a session's
	// record, so that one bad value blocks neither the session nor a
	// listing of sessions (fsck names it).
	timeGlob      = `[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9].[0-9][0-9][0-9][0-9][0-9][0-9]Z`
	noTime        = `0001-01-01T00:00:00.000000Z`
	lineageStatus = `CASE WHEN sessions.successor_id IS NOT NULL OR EXISTS (SELECT 1 FROM sessions c WHERE c.parent_id = sessions.id)
		THEN 'compacted' ELSE sessions.status END`
)

// scanSession reads the columns of sessionColumns (or selectRecordColumns)
// into a Session, after dest.
func scanSession(sc sqlscan.Row, dest ...any) (tasksessiond.Session, error) {
	var s tasksessiond.Session
	err := sc.Scan(append(dest, &s.ID, &s.Title, (*sqlscan.JSON)(&s.Metadata), &s.Status, (*sqlscan.NullText)(&s.ParentID),
		(*sqlscan.NullText)(&s.SuccessorID), (*textTime)(&s.CreatedAt), (*textTime)(&s.UpdatedAt))...)
	return s, err
}

// CreateSession inserts s, stamping its times. tasksessiond.ErrExists if the id is taken.
func (d *DB) CreateSession(ctx context.Context, s *tasksessiond.Session) (err error) {
	defer func() { err = d.lockedOut(err) }()
	if s.Snapshot != nil {
		// Its tasks are its parent's: only Compact, which writes both, makes one.
		return fmt.Errorf("create session %s: a session with a snapshot is made by compacting its parent", s.ID)
	}
	if err := d.checkFile(); err != nil {
		return fmt.Errorf("create session %s: %w", s.ID, err)
	}
	tx, err := d.w.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	defer tx.Rollback()
	if err := createSession(ctx, tx, s, d.now()); err != nil {
		return err
	}
	// A successor's head is written with its first row, in Compact.
	if err := startHead(ctx, tx, s.ID, tasksessiond.ChainStart(nil)); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create session %s: commit: %w", s.ID, err)
	}
	return nil
}

// createSession inserts s's row; a snapshot, if s has one, is the
// caller's to write.
func createSession(ctx context.Context, tx *sqlx.Tx, s *tasksessiond.Session, now time.Time) error {
	s.CreatedAt, s.UpdatedAt = now, now
	if s.Status == "" {
		s.Status = tasksessiond.SessionActive
	}
	if len(s.Metadata) == 0 {
		s.Metadata = json.RawMessage("{}")
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.Title, string(s.Metadata), s.Status, nullString(s.ParentID), nullString(s.SuccessorID),
		formatTime(now), formatTime(now))
	if isUniqueViolation(err) {
		return fmt.Errorf("create session %s: %w", s.ID, tasksessiond.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("create session %s: %w", s.ID, err)
	}
	return nil
}

// GetSession returns the session with id, without its snapshot, or
// tasksessiond.ErrNotFound.
func (d *DB) GetSession(ctx context.Context, id string) (tasksessiond.Session, error) {
	return d.getSession(ctx, id, selectRecordColumns)
}

// LoadSession is GetSession with the snapshot, for rebuilding the store.
func (d *DB) LoadSession(ctx context.Context, id string) (tasksessiond.Session, error) {
	var rec tasksessiond.Session
	// One snapshot of the file: the session's row and its first tasks.
	err := d.ReadTx(ctx, func(v *DB) error {
		var err error
		if rec, err = v.GetSession(ctx, id); err != nil {
			return err
		}
		if rec.SuccessorID != "" {
			// Only a compaction names a successor, and it sets the
			// successor's parent_id in the same transaction: a successor
			// compacted from another session was named by hand, and
			// following it would serve that session's list as this one's.
			var parent sql.NullString
			err := v.q.GetContext(ctx, &parent, `SELECT parent_id FROM sessions WHERE id = ?`, rec.SuccessorID)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("successor of %s: %w", id, err)
			}
			if parent.Valid && parent.String != id {
				return damagedLineage(fmt.Sprintf("session %s names successor %s, which was compacted from %s, not from it", id, rec.SuccessorID, parent.String))
			}
		}
		if rec.Snapshot, err = v.snapshot(ctx, id); err != nil {
			return err
		}
		rec.Log, err = logHead(ctx, v.q, id)
		return err
	})
	return rec, damagedIfCorrupt(err)
}

// snapshot is the store a successor started from (nil for a session that
// started empty), scanning rows directly: at 10,000 tasks, sqlx's
// reflection costs more than the query.
func (d *DB) snapshot(ctx context.Context, id string) (*tasksessiond.Snapshot, error) {
	snap := &tasksessiond.Snapshot{}
	err := d.q.GetContext(ctx, &snap.NextTaskid, `SELECT next_taskid FROM snapshots WHERE session_id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, snapshotError(id, "snapshots", err)
	}
	rows, err := d.q.QueryContext(ctx, `SELECT taskid, status, subject, description FROM snapshot_tasks
		WHERE session_id = ? ORDER BY taskid`, id)
	if err != nil {
		return nil, snapshotError(id, "snapshot_tasks", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t tasksessiond.Task
		if err := rows.Scan(&t.Taskid, &t.Status, &t.Subject, &t.Description); err != nil {
			return nil, snapshotError(id, "snapshot_tasks", err)
		}
		snap.Tasks = append(snap.Tasks, t)
	}
	if err := rows.Err(); err != nil {
		return nil, snapshotError(id, "snapshot_tasks", err)
	}
	return snap, nil
}

// UnreadableSnapshotError is a session's snapshot that SQLite could not
// read (a malformed page of one of its tables): the session cannot be
// loaded, and every other session's snapshot still can.
type UnreadableSnapshotError struct {
	SessionID string
	Table     string // snapshots or snapshot_tasks
	Err       error  // SQLite's error
}

func (e *UnreadableSnapshotError) Error() string {
	return fmt.Sprintf("snapshot of %s: read %s: %v", e.SessionID, e.Table, e.Err)
}

func (e *UnreadableSnapshotError) Unwrap() error { return e.Err }

func snapshotError(id, table string, err error) error {
	var se *sqlite.Error
	if isCorrupt(err) && errors.As(err, &se) {
		return &UnreadableSnapshotError{SessionID: id, Table: table, Err: se}
	}
	return fmt.Errorf("snapshot of %s: read %s: %w", id, table, err)
}

func (d *DB) getSession(ctx context.Context, id, columns string) (tasksessiond.Session, error) {
	s, err := scanSession(d.q.QueryRowContext(ctx, `SELECT `+columns+` FROM sessions WHERE id = ?`, id))
	if isCorrupt(err) && columns == selectRecordColumns {
		s, err = scanSession(d.q.QueryRowContext(ctx, `SELECT `+selectRecordColumnsNoLog+` FROM sessions WHERE id = ?`, id))
	}
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("session %s: %w", id, tasksessiond.ErrNotFound)
	}
	if err != nil {
		return s, fmt.Errorf("get session %s: %w", id, err)
	}
	return s, nil
}

// Head returns the newest session of id's lineage: id itself when it has
// not been compacted, else the end of its chain of successors, which is the
// session that takes writes.
func (d *DB) Head(ctx context.Context, id string) (string, error) {
	var head string
	err := d.q.GetContext(ctx, &head, `
		WITH RECURSIVE chain(id, successor_id) AS (
			SELECT id, coalesce(successor_id, (SELECT c.id FROM sessions c WHERE c.parent_id = sessions.id ORDER BY c.rowid LIMIT 1))
			FROM sessions WHERE id = ?
			UNION
			SELECT s.id, coalesce(s.successor_id, (SELECT c.id FROM sessions c WHERE c.parent_id = s.id ORDER BY c.rowid LIMIT 1))
			FROM sessions s JOIN chain ON s.id = chain.successor_id
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

// ListSessions returns sessions (without their snapshots) newest first and
// the cursor of the next page ("" when there is none).
func (d *DB) ListSessions(ctx context.Context, f tasksessiond.ListFilter) ([]tasksessiond.Session, string, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	var where []string
	var args []any
	if f.Status != "" {
		where = append(where, lineageStatus+" = ?")
		args = append(args, f.Status)
	}
	if f.Cursor != "" {
		// A cursor is a rowid this method handed out: positive.
		before, err := strconv.ParseInt(f.Cursor, 10, 64)
		if err != nil || before < 1 {
			return nil, "", fmt.Errorf("list sessions: cursor %q: %w", f.Cursor, tasksessiond.ErrBadCursor)
		}
		where = append(where, "sessions.rowid < ?")
		args = append(args, before)
	}
	var rest string
	if len(where) > 0 {
		rest = " WHERE " + strings.Join(where, " AND ")
	}
	rest += " ORDER BY sessions.rowid DESC LIMIT ?"
	args = append(args, f.Limit+1)
	out, next, err := d.listSessions(ctx, `SELECT sessions.rowid, `+selectRecordColumns+` FROM sessions`+rest, args, f.Limit)
	if isCorrupt(err) {
		out, next, err = d.listSessions(ctx, `SELECT sessions.rowid, `+selectRecordColumnsNoLog+` FROM sessions`+rest, args, f.Limit)
	}
	return out, next, err
}

func (d *DB) listSessions(ctx context.Context, q string, args []any, limit int) ([]tasksessiond.Session, string, error) {
	f := struct{ Limit int }{limit}
	rows, err := d.q.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, "", fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	out := []tasksessiond.Session{} // an empty page is [], not null
	var rowid int64
	next := ""
	for rows.Next() {
		if len(out) == f.Limit { // one more than the page: there is a next one
			next = strconv.FormatInt(rowid, 10)
			break
		}
		s, err := scanSession(rows, &rowid)
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

// CountSessions returns the number of sessions in the database.
func (d *DB) CountSessions(ctx context.Context) (int, error) {
	var n int
	if err := d.q.GetContext(ctx, &n, `SELECT count(*) FROM sessions`); err != nil {
		return 0, fmt.Errorf("count sessions: %w", err)
	}
	return n, nil
}

// TaskCounts returns the counts by status of a session's tasks, read from
// the tasks view.
func (d *DB) TaskCounts(ctx context.Context, sessionID string) (tasksessiond.Counts, error) {
	all, err := d.TaskCountsOf(ctx, []string{sessionID})
	return all[sessionID], err
}

// TaskCountsOf returns the counts of several sessions in one query (a
// session without tasks is absent from the map: its counts are zero).
func (d *DB) TaskCountsOf(ctx context.Context, ids []string) (map[string]tasksessiond.Counts, error) {
	out := make(map[string]tasksessiond.Counts, len(ids))
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

// Tasks returns a session's tasks from the tasks view, in taskid order:
// for fsck and the shell's users; the daemon answers from the log replayed.
func (d *DB) Tasks(ctx context.Context, sessionID string) ([]tasksessiond.Task, error) {
	// A change's columns edited by hand can leave NULL where a task has
	// text: read as "", which differs from the replay that fsck compares.
	var rows []struct {
		Taskid      sql.NullInt64  `db:"taskid"`
		Status      sql.NullString `db:"status"`
		Subject     sql.NullString `db:"subject"`
		Description sql.NullString `db:"description"`
	}
	if err := d.q.SelectContext(ctx, &rows, `SELECT taskid, status, subject, description FROM tasks WHERE session_id = ? ORDER BY taskid`, sessionID); err != nil {
		return nil, fmt.Errorf("tasks of %s: %w", sessionID, err)
	}
	out := make([]tasksessiond.Task, len(rows))
	for i, r := range rows {
		out[i] = tasksessiond.Task{Taskid: int(r.Taskid.Int64), Status: tasksessiond.Status(r.Status.String), Subject: r.Subject.String, Description: r.Description.String}
	}
	return out, nil
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// damagedLineage is lineage columns that contradict each other, said as
// they are: it is tasksessiond.ErrDamaged.
type damagedLineage string

func (e damagedLineage) Error() string        { return string(e) }
func (e damagedLineage) Is(target error) bool { return target == tasksessiond.ErrDamaged }
