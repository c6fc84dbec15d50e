package db

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksessiond/tasksessiond"
)

// A malformed page (a torn write, a bad sector, bytes written into the
// file) makes SQLite stop any read that reaches it. The log is then read
// as SQLite's .recover reads a table: by rowid ranges, halving a range
// that fails until the rows that cannot be read are found, so that every
// other row is still read; the log's key, a b-tree of its own, says whose
// the unread rows were.

// UnreadableError is a read of the log that went on past rows SQLite
// could not read: every other row was read.
type UnreadableError struct {
	// Ranges are the rowids that could not be read, each from–to.
	Ranges [][2]int64
	// Lost are the rows in them, by session, as the log's key names them:
	// their seqs.
	Lost map[string][]int64
	// Unknown is set when the key could not be read either: whose some
	// unread rows were cannot be told.
	Unknown bool
	Err     error // SQLite's error
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("%d rows of the log could not be read (%v)", e.rows(), e.Err)
}

func (e *UnreadableError) Unwrap() error { return e.Err }

func (e *UnreadableError) rows() int64 {
	var n int64
	for _, r := range e.Ranges {
		n += r[1] - r[0] + 1
	}
	return n
}

// Describe says which rowids could not be read, as ranges.
func (e *UnreadableError) Describe() string {
	parts := make([]string, len(e.Ranges))
	for i, r := range e.Ranges {
		parts[i] = strconv.FormatInt(r[0], 10)
		if r[1] != r[0] {
			parts[i] += "–" + strconv.FormatInt(r[1], 10)
		}
	}
	return strings.Join(parts, ", ")
}

// recoverBudget bounds the queries a recovering read makes: each row that
// cannot be read costs some 2·log2(rowids) of them; past it, what is left
// of a failing range is reported unread as a whole.
const recoverBudget = 20000

const loggedColumns = `session_id, seq, call_id, name, arguments, is_error, result, forced, created_at,
		taskid, status, subject, description, checksum`

// loggedRow is a log row read and kept: the Call's bytes are its own.
type loggedRow struct {
	call      tasksessiond.Call
	createdAt string
}

// eachLoggedRecovering reads the log row by row, by rowid ranges, and
// hands fn what could be read in session and seq order; it returns an
// *UnreadableError saying what could not be read, or nil.
func (d *DB) eachLoggedRecovering(ctx context.Context, fn func(c *tasksessiond.Call, createdAt string) error, cause error) error {
	keys, keyErr := d.logKeys(ctx)
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if err := d.q.QueryRowContext(ctx, `SELECT min(rowid), max(rowid) FROM tool_calls`).Scan(&lo, &hi); err != nil {
		lo, hi = math.MinInt64, math.MaxInt64
		if len(keys) > 0 && keyErr == nil {
			lo, hi = keys[0].rowid, keys[0].rowid
			for _, k := range keys {
				lo, hi = min(lo, k.rowid), max(hi, k.rowid)
			}
		}
	}
	var rows []loggedRow
	var bad [][2]int64
	stack := [][2]int64{{lo, hi}}
	budget := recoverBudget
	for len(stack) > 0 {
		r := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if budget == 0 {
			bad = append(bad, r)
			continue
		}
		budget--
		last, err := d.readRange(ctx, r[0], r[1], &rows)
		if err == nil {
			continue
		}
		if !isCorrupt(err) {
			return fmt.Errorf("read the log: %w", err)
		}
		// The row after last is the first that fails.
		from := r[0]
		if last != nil {
			from = *last + 1
		}
		switch {
		case last != nil && *last == r[1]:
		case from == r[1]:
			bad = append(bad, [2]int64{from, from})
		default:
			mid := from + (r[1]-from)/2
			stack = append(stack, [2]int64{mid + 1, r[1]}, [2]int64{from, mid})
		}
	}
	slices.SortFunc(rows, func(a, b loggedRow) int {
		return cmp.Or(strings.Compare(a.call.SessionID, b.call.SessionID), cmp.Compare(a.call.Seq, b.call.Seq))
	})
	for i := range rows {
		if err := fn(&rows[i].call, rows[i].createdAt); err != nil {
			return err
		}
	}
	if len(bad) == 0 {
		return nil
	}
	out := &UnreadableError{Ranges: merge(bad), Lost: map[string][]int64{}, Unknown: keyErr != nil, Err: cause}
	for _, k := range keys {
		for _, r := range out.Ranges {
			if k.rowid >= r[0] && k.rowid <= r[1] {
				out.Lost[k.session] = append(out.Lost[k.session], k.seq)
			}
		}
	}
	return out
}

// readRange appends the rows of rowids from–to that read, in rowid order,
// to rows, and returns the last rowid read (nil for none) and the error
// that stopped it.
func (d *DB) readRange(ctx context.Context, from, to int64, rows *[]loggedRow) (*int64, error) {
	q, err := d.q.QueryContext(ctx, `SELECT rowid, `+loggedColumns+` FROM tool_calls WHERE rowid BETWEEN ? AND ? ORDER BY rowid`, from, to)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	var last *int64
	for q.Next() {
		var rowid int64
		var c tasksessiond.Call
		var callID, name, createdAt sql.NullString
		var args, result []byte
		var ch changeColumns
		var sum sql.NullInt64
		if err := q.Scan(&rowid, &c.SessionID, &c.Seq, &callID, &name, &args, &c.IsError, &result, &c.Forced, &createdAt,
			&ch.Taskid, &ch.Status, &ch.Subject, &ch.Description, &sum); err != nil {
			return last, err
		}
		c.CallID, c.Name, c.Arguments, c.Result, c.Change = callID.String, name.String, json.RawMessage(args), json.RawMessage(result), ch.change()
		c.Checksum = sum.Int64
		*rows = append(*rows, loggedRow{call: c, createdAt: createdAt.String})
		last = &rowid
	}
	return last, q.Err()
}

type logKey struct {
	session string
	seq     int64
	rowid   int64
}

// logKeys reads the log's key alone (it covers these columns), which is
// kept apart from the rows: what it could read, and why it stopped.
func (d *DB) logKeys(ctx context.Context) ([]logKey, error) {
	q, err := d.q.QueryContext(ctx, `SELECT session_id, seq, rowid FROM tool_calls ORDER BY session_id, seq`)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	var out []logKey
	for q.Next() {
		var k logKey
		if err := q.Scan(&k.session, &k.seq, &k.rowid); err != nil {
			return out, err
		}
		out = append(out, k)
	}
	return out, q.Err()
}

// merge sorts ranges and joins those that touch.
func merge(rs [][2]int64) [][2]int64 {
	slices.SortFunc(rs, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	var out [][2]int64
	for _, r := range rs {
		if n := len(out); n > 0 && out[n-1][1] < math.MaxInt64 && r[0] <= out[n-1][1]+1 {
			out[n-1][1] = max(out[n-1][1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}
