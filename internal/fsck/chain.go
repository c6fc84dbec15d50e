package fsck

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/db"
)

// quote is s as an SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// rowTime names a log row's created_at that is not a time.
func (k *checker) rowTime(row *tasksessiond.Call, createdAt string) {
	k.badTime(fmt.Sprintf("seq %d", row.Seq), "created_at", createdAt,
		fmt.Sprintf("UPDATE tool_calls SET created_at = '%s' WHERE session_id = %s AND seq = %d", noTime, quote(row.SessionID), row.Seq))
}

// noTime is the time a fix sets: any time will do, this one says "unknown".
const noTime = "1970-01-01T00:00:00.000000Z"

// The log's chain, checked as the daemon checks it when it loads a
// session: a session whose chain breaks is one the daemon refuses, and
// its log, which is the truth, cannot be trusted to rebuild anything, so
// repair leaves it as it is.

// badTime names a time column that is not a time: it refuses nothing (the
// daemon reads it as no time) and repair leaves it, but it is named, with
// the statement that sets it to a time.
func (k *checker) badTime(where, column, value, fix string) {
	if !db.IsTime(value) {
		k.problem(false, "%s: its %s %q is not a time (it blocks nothing; sqlite3: %s)", where, column, value, fix)
	}
}

// chainRow checks the next row of k's log against the chain.
func (k *checker) chainRow(row *tasksessiond.Call) {
	if k.chain == nil || k.chainBroken {
		return
	}
	k.chainFailed(k.chain.Row(row))
}

// chainEnd checks that k's log ends at its recorded head.
func (k *checker) chainEnd() {
	if k.chain == nil || k.chainBroken {
		return
	}
	err := k.chain.End()
	var broken *tasksessiond.BrokenLogError
	if last := k.chain.Last(); k.chain.Head.Missing && errors.As(err, &broken) && (last.Seq > 0 || k.chain.Start == 0) {
		// Its rows check, but whether rows went with its head from the
		// end of the log, nothing says: a person decides, not repair. (A
		// successor without rows lost its forced first row: no head
		// would make it whole.)
		k.chainBroken = true
		k.problem(true, "%s (checksum chain broken at seq %d): the daemon refuses this session; repair cannot tell whether rows were lost from the end of its log with its head, so it changes nothing of it: restore a backup taken before the damage, or, if you know its log is whole as it stands (%d rows), record its head (sqlite3: INSERT INTO log_heads (session_id, seq, checksum) VALUES (%s, %d, %d))",
			broken.What, broken.Seq, last.Seq, quote(k.out.ID), last.Seq, last.Checksum)
		return
	}
	k.chainFailed(err)
}

func (k *checker) chainFailed(err error) {
	var broken *tasksessiond.BrokenLogError
	if !errors.As(err, &broken) {
		return
	}
	k.chainBroken = true
	k.problem(true, "%s (checksum chain broken at seq %d): the daemon refuses this session; repair changes nothing of it: restore a backup taken before the damage to get it back",
		broken.What, broken.Seq)
}
