package fsck

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
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

// What SQLite's integrity check says of an index: a page of its b-tree
// ("Tree 12 page 40 cell 0: ...", by the page its b-tree starts at), or
// its entries against its table's rows.
var (
	integrityTree  = regexp.MustCompile(`Tree (\d+) page \d+`)
	integrityIndex = regexp.MustCompile(`(?:missing from|non-unique entry in|wrong # of entries in) index (\S+)`)
)

// damagedIndexes names, from SQLite's integrity check, the indexes whose
// b-tree is malformed or disagrees with its table, each with its REINDEX,
// which repair runs only when it is safe (see reindexUnsafe): an index is
// derived from its table, which must then read whole and check.
func (r Report) damagedIndexes(integrity []string, roots map[int64]string) []string {
	var names []string
	for _, line := range integrity {
		for _, m := range integrityTree.FindAllStringSubmatch(line, -1) {
			root, _ := strconv.ParseInt(m[1], 10, 64)
			if name, ok := roots[root]; ok && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		for _, m := range integrityIndex.FindAllStringSubmatch(line, -1) {
			if _, ok := roots[rootOf(roots, m[1])]; ok && !slices.Contains(names, m[1]) {
				names = append(names, m[1])
			}
		}
	}
	why := reindexUnsafe(r)
	if len(r.Unreadable) > 0 {
		why = "the file does not read whole"
	}
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = fmt.Sprintf("index %s is damaged (a malformed page, or entries that disagree with its table: see the integrity check); it is derived from its table: ", name)
		if why == "" {
			out[i] += fmt.Sprintf("tasksessiond fsck --repair rebuilds it (sqlite3: REINDEX %s)", name)
		} else {
			out[i] += "repair does not rebuild it while " + why
		}
	}
	return out
}

// rootOf is the root page of the index named name (0 when none is).
func rootOf(roots map[int64]string, name string) int64 {
	for root, n := range roots {
		if n == name {
			return root
		}
	}
	return 0
}
