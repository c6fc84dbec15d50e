package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/sqlscan"
)

// changeColumns are a row's change as SQLite holds it: NULL for a read
// or an error, and for a text field the call left. change turns it into
// the domain's Change; a row type, not a twin of it.
type changeColumns struct {
	Taskid      sql.NullInt64  `db:"taskid"`
	Status      sql.NullString `db:"status"`
	Subject     sql.NullString `db:"subject"`
	Description sql.NullString `db:"description"`
}

func (c changeColumns) change() *tasksessiond.Change {
	if !c.Taskid.Valid || !c.Status.Valid {
		return nil
	}
	ch := &tasksessiond.Change{Taskid: int(c.Taskid.Int64), Status: tasksessiond.Status(c.Status.String)}
	if c.Subject.Valid {
		ch.Subject = &c.Subject.String
	}
	if c.Description.Valid {
		ch.Description = &c.Description.String
	}
	return ch
}

const callColumns = `session_id, seq, call_id, name, arguments, is_error, result, forced, created_at`

// readCallColumns are callColumns, the change and the checksum.
const readCallColumns = callColumns + `, taskid, status, subject, description, checksum`

// scanCall reads the columns of readCallColumns into a Call.
func scanCall(sc sqlscan.Row) (tasksessiond.Call, error) {
	var c tasksessiond.Call
	var ch changeColumns
	err := sc.Scan(&c.SessionID, &c.Seq, (*sqlscan.NullText)(&c.CallID), &c.Name, (*sqlscan.JSON)(&c.Arguments), &c.IsError,
		(*sqlscan.JSON)(&c.Result), &c.Forced, (*textTime)(&c.CreatedAt), &ch.Taskid, &ch.Status, &ch.Subject, &ch.Description, (*nullInt)(&c.Checksum))
	c.Change = ch.change()
	return c, err
}

// The statements of the hot path, prepared once on the writer connection,
// and the loader's scan of a log. They are exported so that the bench's raw
// baselines run exactly the daemon's SQL.
const (
	// InsertCallSQL takes session_id, seq, call_id, name, arguments,
	// is_error, result, forced, created_at, then the change a successful
	// write made (NULL otherwise): taskid, the task's status after it, and
	// the subject and description it set (NULL for those it left), then
	// the row's checksum. The tasks view reads the change from these.
	InsertCallSQL = `INSERT INTO tool_calls (` + callColumns + `, taskid, status, subject, description, checksum) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// ScanCallsSQL takes session_id and gives seq, call_id, name,
	// arguments, is_error, result (every row's: the chain covers it),
	// forced, the change and the checksum, in seq order.
	ScanCallsSQL = `SELECT seq, call_id, name, arguments, is_error, result, forced, taskid, status, subject, description, checksum FROM tool_calls WHERE session_id = ? ORDER BY seq`
)

type statements struct {
	insertCall, head, setHead *sql.Stmt
	setHeads                  [headsAtOnce + 1]*sql.Stmt // by the heads they write, 2 and up
}

func (d *DB) prepare(ctx context.Context) error {
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&d.stmts.insertCall, InsertCallSQL}, {&d.stmts.head, headSQL}, {&d.stmts.setHead, setHeadSQL}} {
		stmt, err := d.w.PrepareContext(ctx, p.sql)
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		*p.stmt = stmt
	}
	// Prepared here, not in a transaction: the writer pool's one
	// connection is the transaction's.
	for n := 2; n <= headsAtOnce; n++ {
		stmt, err := d.w.PrepareContext(ctx, setHeadsSQL(n))
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		d.stmts.setHeads[n] = stmt
	}
	return nil
}

// appendCall inserts a call's row, its Checksum set, with insert, the
// insertCall statement of the transaction (through a logWriter, which
// chains it and writes the head).
func appendCall(ctx context.Context, insert *sql.Stmt, a *tasksessiond.Append, now time.Time) error {
	c := &a.Call
	c.CreatedAt = now
	ts := formatTime(now)
	ch := a.Columns()
	_, err := insert.ExecContext(ctx,
		c.SessionID, c.Seq, nullString(c.CallID), c.Name, string(c.Arguments), c.IsError, string(c.Result), c.Forced, ts,
		ch[0], ch[1], ch[2], ch[3], c.Checksum)
	if isUniqueViolation(err) {
		return fmt.Errorf("append call %s/%d (callId %q): %w", c.SessionID, c.Seq, c.CallID, tasksessiond.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("append call %s/%d: %w", c.SessionID, c.Seq, err)
	}
	return nil
}

// EachCall streams a session's log in seq order to fn, without holding it
// all in memory. The Arguments and Result of the tasksessiond.Call passed are valid only
// during the call to fn (they alias the driver's buffers); copy what must
// outlive it. An error from fn stops the scan and is returned.
func (d *DB) EachCall(ctx context.Context, sessionID string, fn func(*tasksessiond.Call) error) error {
	return damagedIfCorrupt(d.eachCall(ctx, ScanCallsSQL, fn, sessionID))
}

// damagedIfCorrupt marks err tasksessiond.ErrDamaged when SQLite found
// the pages it read malformed: the session read is refused by name, not
// reported as storage that may come back.
func damagedIfCorrupt(err error) error {
	if isCorrupt(err) {
		return fmt.Errorf("%w: %w", tasksessiond.ErrDamaged, err)
	}
	return err
}

func (d *DB) eachCall(ctx context.Context, query string, fn func(*tasksessiond.Call) error, sessionID string, params ...any) error {
	rows, err := d.q.QueryContext(ctx, query, append([]any{sessionID}, params...)...)
	if err != nil {
		return fmt.Errorf("calls of %s: %w", sessionID, err)
	}
	defer rows.Close()
	c := tasksessiond.Call{SessionID: sessionID}
	var callID sql.NullString
	var args, result sql.RawBytes
	var ch changeColumns
	var sum sql.NullInt64
	for rows.Next() {
		if err := rows.Scan(&c.Seq, &callID, &c.Name, &args, &c.IsError, &result, &c.Forced,
			&ch.Taskid, &ch.Status, &ch.Subject, &ch.Description, &sum); err != nil {
			return fmt.Errorf("calls of %s: %w", sessionID, err)
		}
		c.CallID, c.Arguments, c.Result, c.Change, c.Checksum = callID.String, json.RawMessage(args), json.RawMessage(result), ch.change(), sum.Int64
		if err := fn(&c); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("calls of %s: %w", sessionID, err)
	}
	return nil
}

// Calls returns a session's log in seq order.
func (d *DB) Calls(ctx context.Context, sessionID string) ([]tasksessiond.Call, error) {
	rows, err := d.q.QueryContext(ctx, `SELECT `+readCallColumns+` FROM tool_calls WHERE session_id = ? ORDER BY seq`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("calls of %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []tasksessiond.Call{}
	for rows.Next() {
		c, err := scanCall(rows)
		if err != nil {
			return nil, fmt.Errorf("calls of %s: %w", sessionID, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("calls of %s: %w", sessionID, err)
	}
	return out, nil
}

// CallBySeq returns the logged call at seq, or tasksessiond.ErrNotFound;
// a row that does not match its checksum (chained to the row before's as
// stored) is a tasksessiond.BrokenLogError: a retry answered from an
// ancestor's log, which no load of this daemon has checked, is checked
// here.
func (d *DB) CallBySeq(ctx context.Context, sessionID string, seq int64) (tasksessiond.Call, error) {
	var c tasksessiond.Call
	var prev sql.NullInt64
	err := d.ReadTx(ctx, func(v *DB) error {
		var err error
		if c, err = scanCall(v.q.QueryRowContext(ctx, `SELECT `+readCallColumns+` FROM tool_calls WHERE session_id = ? AND seq = ?`, sessionID, seq)); err != nil {
			return err
		}
		if seq > 1 {
			return v.q.QueryRowContext(ctx, `SELECT checksum FROM tool_calls WHERE session_id = ? AND seq = ?`, sessionID, seq-1).Scan(&prev)
		}
		snap, err := v.snapshot(ctx, sessionID)
		prev.Int64 = tasksessiond.ChainStart(snap)
		return err
	})
	if errors.Is(err, sql.ErrNoRows) && c.Seq == seq {
		err = &tasksessiond.BrokenLogError{SessionID: sessionID, Seq: seq, What: fmt.Sprintf("row %d is missing from its log", seq-1)}
	}
	if errors.Is(err, sql.ErrNoRows) {
		return tasksessiond.Call{}, fmt.Errorf("call %d of %s: %w", seq, sessionID, tasksessiond.ErrNotFound)
	}
	if err == nil && tasksessiond.Checksum(prev.Int64, &c) != c.Checksum {
		err = &tasksessiond.BrokenLogError{SessionID: sessionID, Seq: seq,
			What: fmt.Sprintf("row %d does not match its checksum (edited, copied from elsewhere, or a byte flipped)", seq)}
	}
	if err != nil {
		return tasksessiond.Call{}, fmt.Errorf("call %d of %s: %w", seq, sessionID, damagedIfCorrupt(err))
	}
	return c, nil
}

// FindCall looks a callId up in the logs of sessions (a lineage's
// ancestors) and returns the session and seq that logged it.
func (d *DB) FindCall(ctx context.Context, sessions []string, callID string) (sessionID string, seq int64, found bool, err error) {
	q, args, err := sqlx.In(`SELECT session_id, seq FROM tool_calls WHERE call_id = ? AND session_id IN (?) LIMIT 1`, callID, sessions)
	if err != nil {
		return "", 0, false, fmt.Errorf("find callId %q: %w", callID, err)
	}
	var r struct {
		SessionID string `db:"session_id"`
		Seq       int64  `db:"seq"`
	}
	err = d.q.GetContext(ctx, &r, q, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, fmt.Errorf("find callId %q: %w", callID, err)
	}
	return r.SessionID, r.Seq, true, nil
}

// Messages returns a session's injected messages in order.
func (d *DB) Messages(ctx context.Context, sessionID string) ([]tasksessiond.Message, error) {
	var rows []struct {
		Role    string `db:"role"`
		Kind    string `db:"kind"`
		Content string `db:"content"`
	}
	if err := d.q.SelectContext(ctx, &rows, `SELECT role, kind, content FROM messages WHERE session_id = ? ORDER BY seq`, sessionID); err != nil {
		return nil, fmt.Errorf("messages of %s: %w", sessionID, err)
	}
	out := make([]tasksessiond.Message, len(rows))
	for i, r := range rows {
		out[i] = tasksessiond.Message{Role: r.Role, Kind: r.Kind, Content: r.Content}
	}
	return out, nil
}

// Compact writes the successor session, its snapshot (the store: the old
// session's log replayed), its messages and its forced first call, and
// seals the old session, in one transaction.
func (d *DB) Compact(ctx context.Context, c tasksessiond.Compaction) (err error) {
	defer func() { err = d.lockedOut(err) }()
	if err := d.checkFile(); err != nil {
		return fmt.Errorf("compact %s: %w", c.Old, err)
	}
	tx, err := d.w.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("compact %s: begin: %w", c.Old, err)
	}
	defer tx.Rollback()
	now := d.now()
	ts := formatTime(now)
	if err := createSession(ctx, tx, c.New, now); err != nil {
		return err
	}
	next := 1
	if c.New.Snapshot != nil {
		next = c.New.Snapshot.NextTaskid
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO snapshots (session_id, next_taskid) VALUES (?, ?)`, c.New.ID, next); err != nil {
		return fmt.Errorf("compact %s: snapshot: %w", c.Old, err)
	}
	// The successor starts from the store, which is the log replayed; the
	// tasks view (each row's change columns, which a hand edit could make
	// disagree with its arguments) gives each task's times only.
	if err := writeSnapshot(ctx, tx, c.Old, c.New.ID, c.Tasks, ts); err != nil {
		return fmt.Errorf("compact %s: %w", c.Old, err)
	}
	for i, m := range c.Messages {
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (session_id, seq, role, kind, content, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			c.New.ID, i+1, m.Role, m.Kind, m.Content, ts); err != nil {
			return fmt.Errorf("compact %s: insert message: %w", c.Old, err)
		}
	}
	w := d.logWriter(ctx, tx)
	// Its first row chains to its snapshot as a load reads it back.
	w.start(c.New.ID, tasksessiond.ChainStart(&tasksessiond.Snapshot{NextTaskid: next, Tasks: c.Tasks}))
	if err := w.append(ctx, c.Forced, now); err != nil {
		return err
	}
	if err := w.flush(ctx); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `UPDATE sessions SET status = ?, successor_id = ?, updated_at = ? WHERE id = ? AND status = ?`,
		tasksessiond.SessionCompacted, c.New.ID, ts, c.Old, tasksessiond.SessionActive)
	if err != nil {
		return fmt.Errorf("compact %s: seal: %w", c.Old, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("compact %s: %w", c.Old, tasksessiond.ErrSealed)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("compact %s: commit: %w", c.Old, err)
	}
	return nil
}

// writeSnapshot writes a successor's first tasks from the store, each
// with the times it has in the old session: carried into it, or its first
// and last logged change (ts for neither). Rows go in batches: a statement
// a row cost 10 µs each in the driver.
func writeSnapshot(ctx context.Context, tx *sqlx.Tx, old, id string, tasks []tasksessiond.Task, ts string) error {
	type times struct{ created, updated string }
	known := make(map[int]times, len(tasks))
	rows, err := tx.QueryContext(ctx, `SELECT taskid, created_at, updated_at FROM snapshot_tasks WHERE session_id = ?1
		UNION ALL
		SELECT taskid, min(created_at), max(created_at) FROM tool_calls WHERE session_id = ?1 AND taskid IS NOT NULL GROUP BY taskid`, old)
	if err != nil {
		return fmt.Errorf("snapshot: times: %w", err)
	}
	for rows.Next() {
		var taskid int
		var t times
		if err := rows.Scan(&taskid, &t.created, &t.updated); err != nil {
			rows.Close()
			return fmt.Errorf("snapshot: times: %w", err)
		}
		if was, ok := known[taskid]; ok { // carried, then changed
			t.created = was.created
		}
		known[taskid] = t
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("snapshot: times: %w", err)
	}
	const batch = 100
	insert := func(n int) string {
		return `INSERT INTO snapshot_tasks (session_id, taskid, status, subject, description, created_at, updated_at) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?), ", n), ", ")
	}
	// The full batches' statement is prepared once, not once a batch.
	var full *sql.Stmt
	if len(tasks) >= batch {
		if full, err = tx.PrepareContext(ctx, insert(batch)); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		defer full.Close()
	}
	args := make([]any, 0, 7*batch)
	for start := 0; start < len(tasks); start += batch {
		part := tasks[start:min(start+batch, len(tasks))]
		args = args[:0]
		for _, t := range part {
			tm, ok := known[t.Taskid]
			if !ok {
				tm = times{ts, ts}
			}
			args = append(args, id, t.Taskid, string(t.Status), t.Subject, t.Description, tm.created, tm.updated)
		}
		if len(part) == batch {
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, insert(len(part)), args...)
		}
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	return nil
}

// RewriteChanges sets the change columns of logged rows (each Append's
// Call names its row) to what their replay gives: fsck --repair, when a
// row's columns disagree with its arguments.
func (d *DB) RewriteChanges(ctx context.Context, appends []tasksessiond.Append) error {
	tx, err := d.w.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("rewrite changes: %w", err)
	}
	defer tx.Rollback()
	for i := range appends {
		c := &appends[i].Call
		ch := appends[i].Columns()
		if _, err := tx.ExecContext(ctx, `UPDATE tool_calls SET taskid = ?, status = ?, subject = ?, description = ? WHERE session_id = ? AND seq = ?`,
			ch[0], ch[1], ch[2], ch[3], c.SessionID, c.Seq); err != nil {
			return fmt.Errorf("rewrite the change of %s/%d: %w", c.SessionID, c.Seq, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("rewrite changes: commit: %w", err)
	}
	return nil
}
