package fsck

import (
	"fmt"
	"strings"

	"github.com/tasksessiond/tasksessiond"
)

// Repair cannot make things worse: it rebuilds only what a consistent,
// checksum-valid log gives, never writes NULL over a value, and rebuilds
// an index from its table only once the table's rows have checked.

// nullsOver reports whether writing want's columns over have's would put
// NULL where a value is.
func nullsOver(have, want *tasksessiond.Change) bool {
	if have == nil {
		return false
	}
	return want == nil || have.Subject != nil && want.Subject == nil || have.Description != nil && want.Description == nil
}

// reindexUnsafe says why rebuilding the indexes from their tables could
// make things worse ("" when it cannot): a table row whose key was changed
// (a flipped byte in a session_id, say) is still found by its old index
// entry, so the daemon serves the session as it was; a REINDEX would file
// the row under the damaged key, and the session would lose it. So the
// indexes are rebuilt only when every log checks (its chain, which covers
// each row's session and seq) and no table holds a row of a session that
// does not exist.
func reindexUnsafe(r Report) string {
	var why []string
	for _, s := range r.Sessions {
		if s.LogDamaged {
			why = append(why, "the log of session "+s.ID+" does not check")
		}
	}
	if len(r.Orphans) > 0 {
		why = append(why, fmt.Sprintf("the log holds rows of %d sessions that do not exist", len(r.Orphans)))
	}
	if len(r.Strays) > 0 {
		why = append(why, fmt.Sprintf("%d tables hold rows of sessions that do not exist", len(r.Strays)))
	}
	if len(why) > 5 {
		why = append(why[:5], "…")
	}
	return strings.Join(why, "; ")
}
