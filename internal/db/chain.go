package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"

	"github.com/tasksessiond/tasksessiond"
)

// The log's chain (see tasksessiond.Summer): each row's checksum column,
// and log_heads, the session's last seq and checksum, written in the
// transaction that logs the row.

func init() {
	// tsd_checksum(prev, session_id, seq, call_id, name, arguments,
	// is_error, result, forced) is a row's checksum, for migration 00014,
	// which chains the rows logged before it.
	err := sqlite.RegisterDeterministicScalarFunction("tsd_checksum", 9, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		text := func(v driver.Value) string {
			switch v := v.(type) {
			case string:
				return v
			case []byte:
				return string(v)
			}
			return ""
		}
		num := func(v driver.Value) int64 { n, _ := v.(int64); return n }
		c := tasksessiond.Call{SessionID: text(args[1]), Seq: num(args[2]), CallID: text(args[3]), Name: text(args[4]),
			Arguments: json.RawMessage(text(args[5])), IsError: num(args[6]) != 0, Result: json.RawMessage(text(args[7])), Forced: num(args[8]) != 0}
		return tasksessiond.Checksum(num(args[0]), &c), nil
	})
	if err != nil {
		panic(err)
	}
	// tsd_snapshot_sum(next_taskid, tasks) is tasksessiond.ChainStart of
	// a snapshot, its tasks given as json_group_array(json_array(taskid,
	// status, subject, description)) in taskid order.
	err = sqlite.RegisterDeterministicScalarFunction("tsd_snapshot_sum", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		next, _ := args[0].(int64)
		text, _ := args[1].(string)
		var rows [][]any
		if text != "" {
			if err := json.Unmarshal([]byte(text), &rows); err != nil {
				return nil, fmt.Errorf("tsd_snapshot_sum: %w", err)
			}
		}
		snap := tasksessiond.Snapshot{NextTaskid: int(next)}
		for _, r := range rows {
			if len(r) != 4 {
				return nil, fmt.Errorf("tsd_snapshot_sum: a task of %d fields", len(r))
			}
			id, _ := r[0].(float64)
			status, _ := r[1].(string)
			subject, _ := r[2].(string)
			description, _ := r[3].(string)
			snap.Tasks = append(snap.Tasks, tasksessiond.Task{Taskid: int(id), Status: tasksessiond.Status(status), Subject: subject, Description: description})
		}
		return tasksessiond.ChainStart(&snap), nil
	})
	if err != nil {
		panic(err)
	}
}

const headSQL = `SELECT seq, checksum FROM log_heads WHERE session_id = ?`

var setHeadSQL = setHeadsSQL(1)

// logWriter logs rows in one transaction: it chains each to the one before
// (given by the caller, or read from the session's head) and writes each
// session's new head once, at flush.
type logWriter struct {
	d                     *DB
	tx                    txStmt
	insert, head, setHead *sql.Stmt
	heads                 map[string]tasksessiond.LogHead
	order                 []string // sessions in heads, in the order first written
	summer                tasksessiond.Summer
}

type txStmt interface {
	StmtContext(context.Context, *sql.Stmt) *sql.Stmt
}

func (d *DB) logWriter(ctx context.Context, tx txStmt) *logWriter {
	return &logWriter{d: d, tx: tx, insert: tx.StmtContext(ctx, d.stmts.insertCall), head: tx.StmtContext(ctx, d.stmts.head),
		setHead: tx.StmtContext(ctx, d.stmts.setHead), heads: map[string]tasksessiond.LogHead{}}
}

// headsAtOnce is how many heads one statement writes: a group commit of
// many sessions writes their heads in a few statements rather than one
// each (a statement's run costs more than the row it writes).
const headsAtOnce = 32

// start makes id's first row chain to sum (its snapshot's).
func (w *logWriter) start(id string, sum int64) {
	w.heads[id] = tasksessiond.LogHead{Checksum: sum}
	w.order = append(w.order, id)
}

// append logs a's row, setting its CreatedAt and Checksum.
func (w *logWriter) append(ctx context.Context, a *tasksessiond.Append, now time.Time) error {
	c := &a.Call
	head, ok := w.heads[c.SessionID]
	if !ok {
		w.order = append(w.order, c.SessionID)
		if c.Seq > 1 && a.Prev != 0 {
			head = tasksessiond.LogHead{Seq: c.Seq - 1, Checksum: a.Prev}
		} else if c.Seq > 1 {
			err := w.head.QueryRowContext(ctx, c.SessionID).Scan(&head.Seq, &head.Checksum)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("append call %s/%d: %w", c.SessionID, c.Seq, &tasksessiond.BrokenLogError{SessionID: c.SessionID, Seq: c.Seq,
					What: "its head (the log_heads row every session has from its creation) is missing"})
			}
			if err != nil {
				return fmt.Errorf("append call %s/%d: read its head: %w", c.SessionID, c.Seq, err)
			}
		}
	}
	if head.Seq >= c.Seq {
		return fmt.Errorf("append call %s/%d (callId %q): logged before: %w", c.SessionID, c.Seq, c.CallID, tasksessiond.ErrExists)
	}
	if head.Seq != c.Seq-1 {
		// Memory was replayed from a log that ended at seq-1: the head
		// moved since (an edit by hand while the daemon ran).
		return fmt.Errorf("append call %s/%d: %w", c.SessionID, c.Seq, &tasksessiond.BrokenLogError{SessionID: c.SessionID, Seq: c.Seq,
			What: fmt.Sprintf("its head is at seq %d, not at the row before the one being logged", head.Seq)})
	}
	c.Checksum = w.summer.Sum(head.Checksum, c)
	if err := appendCall(ctx, w.insert, a, now); err != nil {
		return err
	}
	w.heads[c.SessionID] = tasksessiond.LogHead{Seq: c.Seq, Checksum: c.Checksum}
	return nil
}

// flush writes the heads of the sessions logged to.
func (w *logWriter) flush(ctx context.Context) error {
	args := make([]any, 0, 3*min(len(w.order), headsAtOnce))
	for start := 0; start < len(w.order); start += headsAtOnce {
		part := w.order[start:min(start+headsAtOnce, len(w.order))]
		args = args[:0]
		for _, id := range part {
			h := w.heads[id]
			args = append(args, id, h.Seq, h.Checksum)
		}
		stmt := w.setHead
		if len(part) > 1 {
			stmt = w.tx.StmtContext(ctx, w.d.stmts.setHeads[len(part)])
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("append calls of %s…: write their heads: %w", part[0], err)
		}
	}
	return nil
}

// setHeadsSQL writes n heads.
func setHeadsSQL(n int) string {
	return `INSERT INTO log_heads (session_id, seq, checksum) VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", n), ", ") +
		` ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, checksum = excluded.checksum`
}

// logHead is a session's recorded head, Missing when it has none (which
// the load's check refuses: every session has one from its creation).
func logHead(ctx context.Context, q querier, id string) (*tasksessiond.LogHead, error) {
	var h tasksessiond.LogHead
	err := q.QueryRowContext(ctx, headSQL, id).Scan(&h.Seq, &h.Checksum)
	if errors.Is(err, sql.ErrNoRows) {
		return &tasksessiond.LogHead{Missing: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("head of the log of %s: %w", id, err)
	}
	return &h, nil
}

// startHead records a new session's head before its first row: seq 0 and
// the chain's start, so that a session with no head is damage, not an
// empty log.
func startHead(ctx context.Context, tx *sqlx.Tx, id string, start int64) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO log_heads (session_id, seq, checksum) VALUES (?, 0, ?)`, id, start); err != nil {
		return fmt.Errorf("create session %s: its log's head: %w", id, err)
	}
	return nil
}
