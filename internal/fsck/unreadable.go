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

// unreadableSnapshots reports, by table, the snapshots SQLite could not
// read (a malformed page of snapshots or snapshot_tasks), and whose they
// were: each such session is damaged, and named at its own report too.
func (c *checking) unreadableSnapshots() {
	byTable := map[string][]string{}
	errs := map[string]error{}
	for id, u := range c.snapUnread {
		byTable[u.Table] = append(byTable[u.Table], id)
		errs[u.Table] = u.Err
	}
	for _, table := range []string{"snapshots", "snapshot_tasks"} {
		whose := byTable[table]
		if len(whose) == 0 {
			continue
		}
		slices.Sort(whose)
		c.r.Unreadable = append(c.r.Unreadable, fmt.Sprintf("%s could not be read whole (%v): the snapshots of %s (the tasks they started from) are lost, and the daemon refuses them; every other session's snapshot was read: restore a backup to get them back",
			table, errs[table], strings.Join(whose, ", ")))
		c.r.unread[table] = true
		c.r.Problems++
	}
}

// unreadTables reports the tables beside the log that SQLite could not
// read whole while looking for rows of sessions that do not exist, unless
// a session's snapshot already named the table.
func (r *Report) unreadTables(unread []db.UnreadTable) {
	for _, u := range unread {
		if r.unread[u.Table] {
			continue
		}
		line := fmt.Sprintf("%s could not be read whole (%v): its rows of sessions that do not exist could not be looked for", u.Table, u.Err)
		switch u.Table {
		case "snapshots", "snapshot_tasks":
			line += "; the snapshot of every session checked was read"
		default:
			line += "; whose the unread rows were cannot be told"
		}
		r.Unreadable = append(r.Unreadable, line+": restore a backup")
		r.unread[u.Table] = true
		r.Problems++
	}
}
