package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"

	"github.com/tasksessiond/tasksessiond"
)

// What fsck reads beside the daemon's own queries, and what repair
// rebuilds. People edit this file with the sqlite3 shell: every column is
// read whatever it holds (NULL where the daemon writes text, a time that
// is not one), so that a check reports a bad row instead of stopping at it.

// EachLogged streams every row of the log to fn, read from the table
// itself rather than through an index (fsck's view of the truth), in
// session and seq order (sorted by SQLite), results included; createdAt is
// the row's time as stored. The Call's bytes are valid only during the
// call to fn. Past a malformed page it reads the log row by row (see
// recover.go) and returns an *UnreadableError naming what it could not.
func (d *DB) EachLogged(ctx context.Context, fn func(c *tasksessiond.Call, createdAt string) error) error {
	delivered := false
	err := d.eachLogged(ctx, func(c *tasksessiond.Call, createdAt string) error {
		delivered = true
		return fn(c, createdAt)
	})
	if isCorrupt(err) && !delivered {
		// SQLite sorts every row before it hands over the first: a row it
		// cannot read stops the read before fn has seen any.
		var se *sqlite.Error
		errors.As(err, &se)
		return d.eachLoggedRecovering(ctx, fn, se)
	}
	return err
}

func (d *DB) eachLogged(ctx context.Context, fn func(c *tasksessiond.Call, createdAt string) error) error {
	rows, err := d.q.QueryContext(ctx, `SELECT `+loggedColumns+`
		FROM tool_calls NOT INDEXED ORDER BY session_id, seq`)
	if err != nil {
		return fmt.Errorf("read the log: %w", err)
	}
	defer rows.Close()
	var c tasksessiond.Call
	var callID, name, createdAt sql.NullString
	var args, result sql.RawBytes
	var ch changeColumns
	var sum sql.NullInt64
	for rows.Next() {
		if err := rows.Scan(&c.SessionID, &c.Seq, &callID, &name, &args, &c.IsError, &result, &c.Forced, &createdAt,
			&ch.Taskid, &ch.Status, &ch.Subject, &ch.Description, &sum); err != nil {
			return fmt.Errorf("read the log: %w", err)
		}
		c.CallID, c.Name, c.Arguments, c.Result, c.Change = callID.String, name.String, json.RawMessage(args), json.RawMessage(result), ch.change()
		c.Checksum = sum.Int64
		if err := fn(&c, createdAt.String); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the log: %w", err)
	}
	return nil
}

// LogHeads are every session's recorded log head, by session.
func (d *DB) LogHeads(ctx context.Context) (map[string]tasksessiond.LogHead, error) {
	rows, err := d.q.QueryContext(ctx, `SELECT session_id, seq, checksum FROM log_heads`)
	if err != nil {
		return nil, fmt.Errorf("read the log heads: %w", err)
	}
	defer rows.Close()
	out := map[string]tasksessiond.LogHead{}
	for rows.Next() {
		var id string
		var h tasksessiond.LogHead
		if err := rows.Scan(&id, &h.Seq, &h.Checksum); err != nil {
			return nil, fmt.Errorf("read the log heads: %w", err)
		}
		out[id] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the log heads: %w", err)
	}
	return out, nil
}

// Lineage is a session's row as stored, for checking the lineage: the
// columns a compaction sets (status, parent_id, successor_id) and whether
// the session has a snapshot, which only a compaction writes.
type Lineage struct {
	ID          string
	Status      string
	ParentID    string
	SuccessorID string
	CreatedAt   string // as stored
	Snapshot    bool
	// SnapshotUnknown: a malformed page of snapshots stopped its read, so
	// Snapshot is false for the sessions whose rows were not read.
	SnapshotUnknown bool
}

// Lineages returns every session's Lineage, in id order. Both tables are
// read as they are, not through their keys: a malformed page of a key
// (sessions' or snapshots') stops no check (SQLite's integrity check
// names it), and a snapshot its key no longer finds is still seen.
func (d *DB) Lineages(ctx context.Context) ([]Lineage, error) {
	snapshots, err := d.snapshotIDs(ctx)
	if err != nil && !isCorrupt(err) {
		return nil, fmt.Errorf("read the snapshots: %w", err)
	}
	// A malformed page of snapshots: whose snapshots it held is told by
	// reading each session's through its key (see Snapshot).
	unknown := err != nil
	rows, err := d.q.QueryContext(ctx, `SELECT id, status, parent_id, successor_id, created_at
		FROM sessions NOT INDEXED ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("read the sessions: %w", err)
	}
	defer rows.Close()
	var out []Lineage
	for rows.Next() {
		var l Lineage
		var status, parent, successor, created sql.NullString
		if err := rows.Scan(&l.ID, &status, &parent, &successor, &created); err != nil {
			return nil, fmt.Errorf("read the sessions: %w", err)
		}
		l.Status, l.ParentID, l.SuccessorID, l.CreatedAt = status.String, parent.String, successor.String, created.String
		l.Snapshot, l.SnapshotUnknown = snapshots[l.ID], unknown && !snapshots[l.ID]
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the sessions: %w", err)
	}
	return out, nil
}

// snapshotIDs are the sessions snapshots has a row of, read from the
// table: those read before an error, and the error.
func (d *DB) snapshotIDs(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	rows, err := d.q.QueryContext(ctx, `SELECT session_id FROM snapshots NOT INDEXED`)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return out, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// Snapshot is a session's first tasks as its snapshot rows hold them (nil
// for a session without one), read without its record.
func (d *DB) Snapshot(ctx context.Context, id string) (*tasksessiond.Snapshot, error) {
	return d.snapshot(ctx, id)
}

// IndexRoots are the indexes of the file (the tables' keys too), by the
// page their b-tree starts at, as SQLite's integrity check numbers them
// ("Tree 12 page 40 ...").
func (d *DB) IndexRoots(ctx context.Context) (map[int64]string, error) {
	var rows []struct {
		Name string `db:"name"`
		Root int64  `db:"rootpage"`
	}
	if err := d.q.SelectContext(ctx, &rows, `SELECT name, rootpage FROM sqlite_master WHERE type = 'index'`); err != nil {
		return nil, fmt.Errorf("read the indexes: %w", err)
	}
	out := make(map[int64]string, len(rows))
	for _, r := range rows {
		out[r.Root] = r.Name
	}
	return out, nil
}

// Index is an index the schema defines beside the tables' keys.
type Index struct {
	Name string
	SQL  string // its CREATE INDEX statement
}

// Indexes are the current schema's indexes as its migrations create them
// (a test holds this list to a migrated database): fsck checks each is
// there as defined, and repair creates it from here. A migration that
// adds, drops or changes an index changes this list.
var Indexes = []Index{
	{Name: "sessions_parent", SQL: `CREATE INDEX sessions_parent ON sessions (parent_id) WHERE parent_id IS NOT NULL`},
	{Name: "sessions_successor", SQL: `CREATE INDEX sessions_successor ON sessions (successor_id) WHERE successor_id IS NOT NULL`},
}

// IndexProblems says what is wrong with the indexes of Indexes: one
// missing, or not as the schema defines it. Nil when all are as defined.
func (d *DB) IndexProblems(ctx context.Context) ([]string, error) { return indexProblems(ctx, d.q) }

func indexProblems(ctx context.Context, q querier) ([]string, error) {
	var rows []struct {
		Name string         `db:"name"`
		SQL  sql.NullString `db:"sql"`
	}
	if err := q.SelectContext(ctx, &rows, `SELECT name, sql FROM sqlite_master WHERE type = 'index'`); err != nil {
		return nil, fmt.Errorf("read the indexes: %w", err)
	}
	have := make(map[string]string, len(rows))
	for _, r := range rows {
		have[r.Name] = r.SQL.String
	}
	var out []string
	for _, ix := range Indexes {
		got, ok := have[ix.Name]
		switch {
		case !ok:
			out = append(out, "index "+ix.Name+" is missing (tasksessiond fsck --repair creates it)")
		case squash(got) != squash(ix.SQL):
			out = append(out, fmt.Sprintf("index %s is not as the schema defines it: %s (tasksessiond fsck --repair makes it again)", ix.Name, got))
		}
	}
	return out, nil
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// RebuildIndexes makes every index of Indexes that is missing or not as
// defined again from its definition, then rebuilds every index from its
// table (REINDEX), in one transaction: indexes are derived from the
// tables, and SQLite keeps them in each transaction after that.
func (d *DB) RebuildIndexes(ctx context.Context) (made []string, err error) {
	problems, err := d.IndexProblems(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := d.w.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("rebuild the indexes: %w", err)
	}
	defer tx.Rollback()
	for _, ix := range Indexes {
		bad := false
		for _, p := range problems {
			bad = bad || strings.HasPrefix(p, "index "+ix.Name+" ")
		}
		if !bad {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DROP INDEX IF EXISTS `+ix.Name); err != nil {
			return nil, fmt.Errorf("drop index %s: %w", ix.Name, err)
		}
		if _, err := tx.ExecContext(ctx, ix.SQL); err != nil {
			return nil, fmt.Errorf("create index %s: %w", ix.Name, err)
		}
		made = append(made, ix.Name)
	}
	if _, err := tx.ExecContext(ctx, "REINDEX"); err != nil {
		return nil, fmt.Errorf("reindex %s: %w", d.path, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("rebuild the indexes: commit: %w", err)
	}
	return made, nil
}

// CountCalls counts a session's rows through the log's key.
func (d *DB) CountCalls(ctx context.Context, sessionID string) (int, error) {
	var n int
	if err := d.q.GetContext(ctx, &n, `SELECT count(*) FROM tool_calls WHERE session_id = ?`, sessionID); err != nil {
		return 0, fmt.Errorf("count calls of %s: %w", sessionID, err)
	}
	return n, nil
}

// UnreadTable is a table beside the log that SQLite could not read whole
// (a malformed page): what StrayRows says of it is what it could read
// before it stopped.
type UnreadTable struct {
	Table string
	Err   error // SQLite's error
}

// StrayRows are the rows beside the log that name a session that does not
// exist, by table, read from the tables themselves (not through an index,
// which may still hold the key as it was): "snapshots: 1 row of session
// \"s\\x8a3\"". Nil when there are none. A table SQLite cannot read
// whole (a malformed page) is not the end of the check: it is returned in
// unread, and the next table is read.
func (d *DB) StrayRows(ctx context.Context) (out []string, unread []UnreadTable, err error) {
	for _, table := range []string{"snapshots", "snapshot_tasks", "messages", "log_heads"} {
		var rows []struct {
			ID string `db:"session_id"`
			N  int    `db:"n"`
		}
		// id || '': an IN looks its right side up through an index on
		// that column whatever NOT INDEXED says; an expression has none.
		err := d.q.SelectContext(ctx, &rows, `SELECT session_id, count(*) AS n FROM `+table+` NOT INDEXED
			WHERE session_id NOT IN (SELECT id || '' FROM sessions NOT INDEXED) GROUP BY session_id ORDER BY session_id`)
		if isCorrupt(err) {
			var se *sqlite.Error
			errors.As(err, &se)
			unread = append(unread, UnreadTable{Table: table, Err: se})
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", table, err)
		}
		for _, r := range rows {
			out = append(out, fmt.Sprintf("%s: %d rows of session %q, which does not exist", table, r.N, r.ID))
		}
	}
	return out, unread, nil
}
