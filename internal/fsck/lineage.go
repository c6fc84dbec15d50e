package fsck

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/db"
)

// A compaction only ever adds a new session after its parent, so the
// lineage (a session's parent_id, and the successor_id naming it) has no
// cycle; a hand edit can make one. A session that was compacted into has
// a snapshot, written in the same transaction: an edge into a session
// without one was made by hand, and the advice cuts that edge.

// cycleOf reports a session in a lineage cycle, naming the whole cycle
// and the statements that cut the edge made by hand, once, at the cycle's
// first session (the others name it); the columns of a cycle's sessions
// are not checked one by one, whose advice would follow the cycle round.
func (c *checking) cycleOf(k *checker) bool {
	if c.cycles == nil {
		c.cycles = c.findCycles()
	}
	cy, ok := c.cycles[k.out.ID]
	if !ok {
		return false
	}
	path := strings.Join(append(slices.Clone(cy), cy[0]), " → ")
	if k.out.ID != cy[0] {
		k.problem(false, "it is in the lineage cycle %s (see session %s)", path, cy[0])
		return true
	}
	var fixes []string
	for i, from := range cy {
		to := c.lineage[cy[(i+1)%len(cy)]]
		if to.Snapshot {
			continue
		}
		fixes = append(fixes, c.cut(c.lineage[from], to)...)
	}
	if len(fixes) == 0 {
		k.problem(false, "its lineage is a cycle: %s, which no compaction makes, and every session of it has a snapshot, so which edge was edited cannot be told: restore a backup", path)
		return true
	}
	k.problem(false, "its lineage is a cycle: %s, which no compaction makes; the edge into a session without a snapshot (never compacted into) was made by hand (sqlite3: %s)", path, strings.Join(fixes, "; "))
	return true
}

// cut is the statements that remove the edge from → to, in whichever of
// its two columns says it.
func (c *checking) cut(from, to db.Lineage) []string {
	var out []string
	if from.SuccessorID == to.ID {
		out = append(out, c.unname(from, to.ID))
	}
	if to.ParentID == from.ID {
		out = append(out, fmt.Sprintf("UPDATE sessions SET parent_id = NULL WHERE id = %s", quote(to.ID)))
	}
	return out
}

// unname is the statement that takes from's successor_id off wrong, which
// names a session never compacted from it: the session whose parent_id
// names from is its successor, if there is one, else it has none and is
// active.
func (c *checking) unname(from db.Lineage, wrong string) string {
	for _, kid := range c.children[from.ID] {
		if kid != wrong && kid != from.ID {
			return fmt.Sprintf("UPDATE sessions SET successor_id = %s, status = '%s' WHERE id = %s", quote(kid), tasksessiond.SessionCompacted, quote(from.ID))
		}
	}
	return fmt.Sprintf("UPDATE sessions SET successor_id = NULL, status = '%s' WHERE id = %s", tasksessiond.SessionActive, quote(from.ID))
}

// findCycles returns each session in a cycle of the lineage with its
// cycle, starting at its smallest id, each edge going from a session to
// the one compacted from it (by either column).
func (c *checking) findCycles() map[string][]string {
	next := func(id string) []string {
		out := slices.Clone(c.children[id])
		if s := c.lineage[id].SuccessorID; s != "" {
			if _, ok := c.lineage[s]; ok && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		slices.Sort(out)
		return out
	}
	ids := make([]string, 0, len(c.lineage))
	for id := range c.lineage {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[string]int, len(ids))
	cycles := map[string][]string{}
	var path []string
	var visit func(id string)
	visit = func(id string) {
		state[id] = onPath
		path = append(path, id)
		for _, n := range next(id) {
			switch state[n] {
			case unseen:
				visit(n)
			case onPath:
				cy := slices.Clone(path[slices.Index(path, n):])
				if slices.ContainsFunc(cy, func(s string) bool { _, ok := cycles[s]; return ok }) {
					continue // one cycle per session
				}
				first := slices.Index(cy, slices.Min(cy))
				cy = append(cy[first:], cy[:first]...)
				for _, s := range cy {
					cycles[s] = cy
				}
			}
		}
		path = path[:len(path)-1]
		state[id] = done
	}
	for _, id := range ids {
		if state[id] == unseen {
			visit(id)
		}
	}
	return cycles
}
