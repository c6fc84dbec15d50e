package pgdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/sqlscan"
)

const callColumns = `session_id, seq, call_id, name, arguments, is_error, result, forced, created_at`

// scanCall reads the columns of callColumns into a Call.
func scanCall(sc sqlscan.Row) (tasksessiond.Call, error) {
	var c tasksessiond.Call
	err := sc.Scan(&c.SessionID, &c.Seq, (*sqlscan.NullText)(&c.CallID), &c.Name, (*sqlscan.JSON)(&c.Arguments), &c.IsError,
		(*sqlscan.JSON)(&c.Result), &c.Forced, &c.CreatedAt)
	c.CreatedAt = c.CreatedAt.UTC()
	return c, err
}

// insertFencedSQL logs one call if, and only if, this daemon holds the
// session's unexpired lease and the session's head is the row before this
// one: the fence, the insert and the head's move are one statement, so one
// round trip and one transaction. FOR SHARE holds the lease row until the
// commit, so a daemon taking the session over waits for this call to
// commit and then replays it; a daemon that has lost the lease inserts
// nothing, and nothing is appended to a sealed session (whose sealing this
// daemon may not have heard of: a compaction's commit cut off; only the
// lease holder compacts, so the session row needs no lock). The row's
// checksum chains it to the head's (tasksessiond.Summer), which the head
// then records.
// Parameters: session_id, seq, call_id, name, arguments,
// is_error, result, forced, created_at, taskid, owner, then the change:
// status, subject, description; then the previous checksum and the row's.
const insertFencedSQL = `WITH fence AS (
		SELECT 1 FROM leases l JOIN sessions s ON s.id = l.session_id JOIN log_heads h ON h.session_id = l.session_id
		WHERE l.session_id = $1 AND l.owner = $11 AND l.expires_at > clock_timestamp() AND s.status = 'active'
			AND h.seq = $2::bigint - 1 AND h.checksum = $15::bigint
			AND NOT EXISTS (SELECT 1 FROM goose_db_version WHERE version_id > $17::bigint)
		FOR SHARE OF l FOR UPDATE OF h
	), logged AS (
		INSERT INTO tool_calls (` + callColumns + `, taskid, status, subject, description, checksum)
		SELECT $1, $2::bigint, $3, $4, $5, $6::boolean, $7, $8::boolean, $9::timestamptz, $10::integer, $12, $13, $14, $16::bigint FROM fence
		RETURNING session_id
	)
	UPDATE log_heads SET seq = $2::bigint, checksum = $16::bigint FROM logged WHERE log_heads.session_id = logged.session_id`

// insertLeasedSQL is insertFencedSQL's row alone, fenced by the lease
// (and the schema) only: a batch checks and moves each session's head once
// (appendBatch). Parameters: as insertFencedSQL's, less the previous
// checksum: $15 is the row's, $16 the schema.
const insertLeasedSQL = `WITH fence AS (
		SELECT 1 FROM leases l JOIN sessions s ON s.id = l.session_id
		WHERE l.session_id = $1 AND l.owner = $11 AND l.expires_at > clock_timestamp() AND s.status = 'active'
			AND NOT EXISTS (SELECT 1 FROM goose_db_version WHERE version_id > $16::bigint)
		FOR SHARE OF l
	)
	INSERT INTO tool_calls (` + callColumns + `, taskid, status, subject, description, checksum)
	SELECT $1, $2::bigint, $3, $4, $5, $6::boolean, $7, $8::boolean, $9::timestamptz, $10::integer, $12, $13, $14, $15::bigint FROM fence`

// AppendCalls logs the calls, fenced by this daemon's leases on their
// sessions, returning once they have committed. A session whose lease this
// daemon no longer holds gets a *tasksessiond.LeaseHeldError naming the holder
// (or an error saying the lease expired), and nothing is written.
func (d *DB) AppendCalls(ctx context.Context, appends []tasksessiond.Append) error {
	now := d.now()
	if len(appends) == 1 {
		return d.appendCall(ctx, d.x, &appends[0], now)
	}
	tx, err := d.x.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("append calls: begin: %w", err)
	}
	defer tx.Rollback()
	if err := d.appendBatch(ctx, tx, appends, now); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("append calls: commit: %w", err)
	}
	return nil
}

// appendBatch logs several calls in tx (a transcript replayed into a new
// session), checking each session's head at its first row, under a row
// lock, and moving it once, after its last: a row updated again and again
// in one transaction leaves a version per update for the next to walk
// past.
func (d *DB) appendBatch(ctx context.Context, tx *sqlx.Tx, appends []tasksessiond.Append, now time.Time) error {
	heads := map[string]tasksessiond.LogHead{} // as the batch leaves them
	var order []string
	for i := range appends {
		a := &appends[i]
		c := &a.Call
		h, seen := heads[c.SessionID]
		if !seen {
			err := tx.QueryRowxContext(ctx, `SELECT seq, checksum FROM log_heads WHERE session_id = $1 FOR UPDATE`, c.SessionID).Scan(&h.Seq, &h.Checksum)
			if errors.Is(err, sql.ErrNoRows) {
				h.Missing = true
			} else if err != nil {
				return fmt.Errorf("append call %s/%d: read its head: %w", c.SessionID, c.Seq, err)
			}
			order = append(order, c.SessionID)
		}
		if a.Prev == 0 && c.Seq > 1 && h.Seq == c.Seq-1 {
			a.Prev = h.Checksum // the caller holds no chain
		}
		if h.Missing || h.Seq != c.Seq-1 || h.Checksum != a.Prev {
			return fmt.Errorf("append call %s/%d: %w", c.SessionID, c.Seq, d.unfenced(ctx, tx, a))
		}
		c.CreatedAt = now
		c.Checksum = tasksessiond.Checksum(a.Prev, c)
		ch := a.Columns()
		res, err := tx.ExecContext(ctx, insertLeasedSQL, c.SessionID, c.Seq, nullString(c.CallID), c.Name, string(c.Arguments),
			c.IsError, string(c.Result), c.Forced, now, ch[0], d.owner, ch[1], ch[2], ch[3], c.Checksum, d.known)
		if pgCode(err) == uniqueViolation {
			return fmt.Errorf("append call %s/%d (callId %q): %w", c.SessionID, c.Seq, c.CallID, tasksessiond.ErrExists)
		}
		if err != nil {
			return fmt.Errorf("append call %s/%d: %w", c.SessionID, c.Seq, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("append call %s/%d: %w", c.SessionID, c.Seq, d.fenced(ctx, c.SessionID))
		}
		heads[c.SessionID] = tasksessiond.LogHead{Seq: c.Seq, Checksum: c.Checksum}
	}
	for _, id := range order {
		h := heads[id]
		if _, err := tx.ExecContext(ctx, `UPDATE log_heads SET seq = $2, checksum = $3 WHERE session_id = $1`, id, h.Seq, h.Checksum); err != nil {
			return fmt.Errorf("append calls of %s: write its head: %w", id, err)
		}
	}
	return nil
}

func (d *DB) appendCall(ctx context.Context, x sqlx.ExtContext, a *tasksessiond.Append, now time.Time) error {
	c := &a.Call
	c.CreatedAt = now
	ch := a.Columns()
	if c.Seq > 1 && a.Prev == 0 {
		// The caller holds no chain (the manager hands its last row's
		// checksum): the row chains to the recorded head.
		err := sqlx.GetContext(ctx, x, &a.Prev, `SELECT checksum FROM log_heads WHERE session_id = $1 AND seq = $2`, c.SessionID, c.Seq-1)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("append call %s/%d: read its head: %w", c.SessionID, c.Seq, err)
		}
	}
	c.Checksum = tasksessiond.Checksum(a.Prev, c)
	res, err := x.ExecContext(ctx, insertFencedSQL, c.SessionID, c.Seq, nullString(c.CallID), c.Name, string(c.Arguments),
		c.IsError, string(c.Result), c.Forced, now, ch[0], d.owner, ch[1], ch[2], ch[3], a.Prev, c.Checksum, d.known)
	if pgCode(err) == uniqueViolation {
		return fmt.Errorf("append call %s/%d (callId %q): %w", c.SessionID, c.Seq, c.CallID, tasksessiond.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("append call %s/%d: %w", c.SessionID, c.Seq, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("append call %s/%d: %w", c.SessionID, c.Seq, d.unfenced(ctx, x, a))
	}
	return nil
}

// unfenced says why a's row was not logged: the lease (fenced), or, under
// a lease this daemon holds, a head that is not the row before a's (the
// log changed since it was loaded: damage, or an edit by hand).
func (d *DB) unfenced(ctx context.Context, x sqlx.ExtContext, a *tasksessiond.Append) error {
	c := &a.Call
	var ours bool
	err := sqlx.GetContext(ctx, x, &ours, `SELECT EXISTS (SELECT 1 FROM leases l JOIN sessions s ON s.id = l.session_id
		WHERE l.session_id = $1 AND l.owner = $2 AND l.expires_at > clock_timestamp() AND s.status = 'active')`, c.SessionID, d.owner)
	if err != nil || !ours {
		return d.fenced(ctx, c.SessionID)
	}
	h, err := headOf(ctx, x, c.SessionID)
	switch {
	case err != nil:
		return err
	case h.Missing:
		return &tasksessiond.BrokenLogError{SessionID: c.SessionID, Seq: c.Seq, What: "its head (the log_heads row every session has from its creation) is missing"}
	case h.Seq >= c.Seq:
		return fmt.Errorf("callId %q: logged before: %w", c.CallID, tasksessiond.ErrExists)
	case h.Seq != c.Seq-1 || h.Checksum != a.Prev:
		return &tasksessiond.BrokenLogError{SessionID: c.SessionID, Seq: c.Seq,
			What: fmt.Sprintf("its head is at seq %d, not at the row before the one being logged", h.Seq)}
	}
	return d.fenced(ctx, c.SessionID)
}

// EachCall streams a session's log in seq order to fn. The Arguments and
// Result passed are valid only during the call to fn.
func (d *DB) EachCall(ctx context.Context, sessionID string, fn func(*tasksessiond.Call) error) error {
	return eachCall(ctx, d.x, sessionID, fn)
}

func eachCall(ctx context.Context, q sqlx.QueryerContext, sessionID string, fn func(*tasksessiond.Call) error) error {
	rows, err := q.QueryContext(ctx, `SELECT seq, call_id, name, arguments, is_error, result, forced, checksum FROM tool_calls WHERE session_id = $1 ORDER BY seq`, sessionID)
	if err != nil {
		return fmt.Errorf("calls of %s: %w", sessionID, err)
	}
	defer rows.Close()
	c := tasksessiond.Call{SessionID: sessionID}
	var callID sql.NullString
	var args, result sql.RawBytes
	var sum sql.NullInt64
	for rows.Next() {
		if err := rows.Scan(&c.Seq, &callID, &c.Name, &args, &c.IsError, &result, &c.Forced, &sum); err != nil {
			return fmt.Errorf("calls of %s: %w", sessionID, err)
		}
		c.CallID, c.Arguments, c.Result, c.Checksum = callID.String, json.RawMessage(args), json.RawMessage(result), sum.Int64
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
	rows, err := d.x.QueryContext(ctx, `SELECT `+callColumns+` FROM tool_calls WHERE session_id = $1 ORDER BY seq`, sessionID)
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
// stored) is a tasksessiond.BrokenLogError, as on SQLite: a retry
// answered from an ancestor's log, which no load of this daemon has
// checked, is checked here.
func (d *DB) CallBySeq(ctx context.Context, sessionID string, seq int64) (tasksessiond.Call, error) {
	var c tasksessiond.Call
	var sum, prev sql.NullInt64
	err := d.x.QueryRowxContext(ctx, `SELECT `+callColumns+`, checksum,
		(SELECT p.checksum FROM tool_calls p WHERE p.session_id = $1 AND p.seq = $2 - 1)
		FROM tool_calls WHERE session_id = $1 AND seq = $2`, sessionID, seq).Scan(&c.SessionID, &c.Seq, (*sqlscan.NullText)(&c.CallID), &c.Name,
		(*sqlscan.JSON)(&c.Arguments), &c.IsError, (*sqlscan.JSON)(&c.Result), &c.Forced, &c.CreatedAt, &sum, &prev)
	c.CreatedAt, c.Checksum = c.CreatedAt.UTC(), sum.Int64
	if errors.Is(err, sql.ErrNoRows) {
		return tasksessiond.Call{}, fmt.Errorf("call %d of %s: %w", seq, sessionID, tasksessiond.ErrNotFound)
	}
	if err != nil {
		return tasksessiond.Call{}, fmt.Errorf("call %d of %s: %w", seq, sessionID, err)
	}
	if seq == 1 {
		snap, err := snapshotOf(ctx, d.x, sessionID)
		if err != nil {
			return tasksessiond.Call{}, fmt.Errorf("call %d of %s: %w", seq, sessionID, err)
		}
		prev = sql.NullInt64{Int64: tasksessiond.ChainStart(snap), Valid: true}
	}
	switch {
	case !prev.Valid:
		err = &tasksessiond.BrokenLogError{SessionID: sessionID, Seq: seq, What: fmt.Sprintf("row %d is missing from its log, or has no checksum", seq-1)}
	case tasksessiond.Checksum(prev.Int64, &c) != c.Checksum:
		err = &tasksessiond.BrokenLogError{SessionID: sessionID, Seq: seq,
			What: fmt.Sprintf("row %d does not match its checksum (edited, copied from elsewhere, or a byte flipped)", seq)}
	}
	if err != nil {
		return tasksessiond.Call{}, fmt.Errorf("call %d of %s: %w", seq, sessionID, err)
	}
	return c, nil
}

// FindCall looks a callId up in the logs of sessions (a lineage's
// ancestors) and returns the session and seq that logged it.
func (d *DB) FindCall(ctx context.Context, sessions []string, callID string) (string, int64, bool, error) {
	var r struct {
		SessionID string `db:"session_id"`
		Seq       int64  `db:"seq"`
	}
	err := d.x.GetContext(ctx, &r, `SELECT session_id, seq FROM tool_calls WHERE call_id = $1 AND session_id = ANY($2) LIMIT 1`, callID, sessions)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, fmt.Errorf("find callId %q: %w", callID, err)
	}
	return r.SessionID, r.Seq, true, nil
}

// Compact writes the successor (its row, snapshot, messages and forced
// first call, and this daemon's lease on it) and seals the old session, in
// one transaction fenced by the old session's lease.
func (d *DB) Compact(ctx context.Context, c tasksessiond.Compaction) error {
	// The successor's first tasks, as JSON, for one INSERT of their rows.
	// Encoded first: a long list's JSON takes a while, and the transaction
	// holds the old session's lease row.
	snap, err := json.Marshal(c.New.Snapshot)
	if err != nil {
		return fmt.Errorf("compact %s: encode snapshot: %w", c.Old, err)
	}
	began := time.Now() // before the successor's lease is written
	tx, err := d.x.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("compact %s: begin: %w", c.Old, err)
	}
	defer tx.Rollback()
	var one int
	err = tx.GetContext(ctx, &one, `SELECT 1 FROM leases WHERE session_id = $1 AND owner = $2 AND expires_at > clock_timestamp() FOR SHARE`, c.Old, d.owner)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("compact %s: %w", c.Old, d.fenced(ctx, c.Old))
	}
	if err != nil {
		return fmt.Errorf("compact %s: lease: %w", c.Old, err)
	}
	now := d.now()
	if err := d.createSession(ctx, tx, c.New, now); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO snapshots (session_id, next_taskid) VALUES ($1, $2)`, c.New.ID, c.New.Snapshot.NextTaskid); err != nil {
		return fmt.Errorf("compact %s: snapshot: %w", c.Old, err)
	}
	// Its tasks as rows, which the tasks view reads and the daemon loads.
	if _, err := tx.ExecContext(ctx, `INSERT INTO snapshot_tasks (session_id, taskid, status, subject, description, created_at)
		SELECT $1, (t ->> 'taskid')::int, t ->> 'status', coalesce(t ->> 'subject', ''), t ->> 'description', $3::timestamptz
		FROM json_array_elements(CASE json_typeof($2::json -> 'tasks') WHEN 'array' THEN $2::json -> 'tasks' ELSE '[]' END) t`,
		c.New.ID, string(snap), now); err != nil {
		return fmt.Errorf("compact %s: snapshot tasks: %w", c.Old, err)
	}
	for i, m := range c.Messages {
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (session_id, seq, role, kind, content, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			c.New.ID, i+1, m.Role, m.Kind, m.Content, now); err != nil {
			return fmt.Errorf("compact %s: insert message: %w", c.Old, err)
		}
	}
	// The successor is served here from the start: the manager adopts it.
	if _, err := tx.ExecContext(ctx, `INSERT INTO leases (session_id, owner, owner_info, expires_at)
		VALUES ($1, $2, $3, clock_timestamp() + $4::bigint * interval '1 microsecond')`,
		c.New.ID, d.owner, d.ownerInfo, d.lease.Microseconds()); err != nil {
		return fmt.Errorf("compact %s: lease the successor: %w", c.Old, err)
	}
	// Its first row chains to its snapshot, from the head createSession wrote.
	c.Forced.Prev = tasksessiond.ChainStart(c.New.Snapshot)
	if err := d.appendCall(ctx, tx, c.Forced, now); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `UPDATE sessions SET status = $1, successor_id = $2, updated_at = $3 WHERE id = $4 AND status = $5`,
		tasksessiond.SessionCompacted, c.New.ID, now, c.Old, tasksessiond.SessionActive)
	if err != nil {
		return fmt.Errorf("compact %s: seal: %w", c.Old, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("compact %s: %w", c.Old, tasksessiond.ErrSealed)
	}
	// Nobody could take the lease while the row was locked, but it may have
	// expired meanwhile (this daemon paused): a compaction commits only
	// under a lease still running, as an append does.
	err = tx.GetContext(ctx, &one, `SELECT 1 FROM leases WHERE session_id = $1 AND owner = $2 AND expires_at > clock_timestamp()`, c.Old, d.owner)
	if errors.Is(err, sql.ErrNoRows) {
		d.unhold(c.Old)
		return fmt.Errorf("compact %s: %w (it ran out during the compaction)", c.Old, tasksessiond.ErrLeaseExpired)
	}
	if err != nil {
		return fmt.Errorf("compact %s: lease: %w", c.Old, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("compact %s: commit: %w", c.Old, err)
	}
	d.hold(c.New.ID, began)
	return nil
}
