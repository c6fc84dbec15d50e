package fsck

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/db"
)

// unreadable reports the rows of the log that SQLite could not read (a
// malformed page), which the read went on past: once for the file, and at
// each session asked for whose rows they were, as a damaged log (what is
// reported of it is what could be read).
func (c *checking) unreadable(u *db.UnreadableError, want map[string]bool) {
	if u == nil {
		return
	}
	whose := make([]string, 0, len(u.Lost))
	for id := range u.Lost {
		whose = append(whose, id)
	}
	slices.Sort(whose)
	line := fmt.Sprintf("the log's rows at rowid %s could not be read (%v): ", u.Describe(), u.Err)
	switch {
	case len(whose) > 0 && u.Unknown:
		line += "the log's key, which does not read whole either, names some as rows of " + strings.Join(whose, ", ")
	case len(whose) > 0:
		line += "the log's key names them as rows of " + strings.Join(whose, ", ")
	default:
		line += "whose they were cannot be told (the log's key does not name them)"
	}
	c.r.Unreadable = append(c.r.Unreadable, line+"; every other row was read: restore a backup to get them back")
	c.r.Problems++
	for _, id := range whose {
		k, ok := c.checkers[id]
		if !ok || !want[id] {
			continue
		}
		seqs := u.Lost[id]
		slices.Sort(seqs)
		s := make([]string, len(seqs))
		for i, q := range seqs {
			s[i] = strconv.FormatInt(q, 10)
		}
		noun := "seq"
		if len(s) > 1 {
			noun = "seqs"
		}
		// What follows a lost row replays without it: every difference
		// past it is that row's, and is not listed.
		k.out.Problems, k.fixes = nil, nil
		k.problem(true, "%s %s could not be read (%v): %d of its rows were read, and replay without it to %d tasks; the daemon cannot load it: restore a backup",
			noun, strings.Join(s, ", "), u.Err, k.out.Rows, k.out.Tasks)
	}
}
