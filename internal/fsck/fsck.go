// Package fsck checks a database against its own log. It reads every row
// of the log from the table itself (not through an index), whatever the
// row holds, replays each session from its snapshot, and compares with
// that replay everything read beside it: each row's change columns and its
// result (what the model was told), the tasks view, the log's key; each
// successor's snapshot against its parent's replay; the lineage columns
// against each other and the snapshots; every index of the schema, and
// SQLite's integrity check. It reports every problem and goes on, past
// rows SQLite cannot read too: only a file it cannot open stops it.
// Repair rebuilds what is derived from the log, and only from a replay
// found consistent.
package fsck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/replay"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

// Session is what checking one session found.
type Session struct {
	ID    string `json:"id"`
	Rows  int    `json:"rows"`
	Tasks int    `json:"tasks"`
	// Agree counts the rows whose change columns and result agree with
	// what replaying them yields.
	Agree    int                       `json:"agree"`
	Replay   tasksessiond.ReplayReport `json:"replay"`
	Problems []string                  `json:"problems,omitempty"`
	// LogDamaged says the log itself disagrees with itself (a row gone, an
	// argument or result edited, a snapshot that is not its parent's
	// list): there is no consistent replay to rebuild from, so repair
	// changes nothing of this session.
	LogDamaged bool `json:"logDamaged,omitempty"`
}

// Report is what a check found.
type Report struct {
	// Schema, set for a file at an older schema, says so: nothing but
	// SQLite's integrity check is done on it (see older).
	Schema    string   `json:"schema,omitempty"`
	Integrity []string `json:"integrity,omitempty"` // SQLite's findings; empty when ok
	// Indexes are the schema's indexes that are missing or not as defined.
	Indexes []string `json:"indexes,omitempty"`
	// Views are the schema's views that are missing or not as defined.
	Views    []string  `json:"views,omitempty"`
	Sessions []Session `json:"sessions"`
	// Foreign are schema objects the schema does not define (a trigger,
	// a view, an index), each with the statement that drops it.
	Foreign []string `json:"foreign,omitempty"`
	// Orphans are log rows of sessions that do not exist.
	Orphans []string `json:"orphans,omitempty"`
	// Unreadable says which rows SQLite could not read (a malformed page
	// of the log, of a snapshot's tables, of another table beside them),
	// and whose they were.
	Unreadable []string `json:"unreadable,omitempty"`
	// Strays are, by table, rows beside the log naming sessions that do
	// not exist (a snapshot whose session_id was edited, say).
	Strays   []string `json:"strays,omitempty"`
	Problems int      `json:"problems"`
	// fixes are, by session, the rows whose change columns disagree with
	// their replay, as the replay gives them.
	fixes map[string][]tasksessiond.Append
	// unread are the tables beside the log named in Unreadable.
	unread map[string]bool
}

// OK reports whether nothing was found.
func (r Report) OK() bool { return r.Problems == 0 }

// Agree is how many rows of every session agree with their replay.
func (r Report) Agree() int {
	n := 0
	for _, s := range r.Sessions {
		n += s.Agree
	}
	return n
}

// Check runs SQLite's integrity check, checks the schema's indexes, and
// checks the sessions given, or every session when none is, all as of one
// moment (one read transaction), even beside a daemon that writes. It
// returns an error only when the file cannot be read.
func Check(ctx context.Context, d *db.DB, ids ...string) (Report, error) {
	var r Report
	err := d.ReadTx(ctx, func(view *db.DB) error {
		integrity, err := view.IntegrityCheck(ctx)
		if err != nil {
			return err
		}
		if old, err := older(ctx, view); err != nil || old != "" {
			r = Report{Schema: old, Integrity: integrity, Problems: 1 + len(integrity)}
			return err
		}
		indexes, err := view.IndexProblems(ctx)
		if err != nil {
			return err
		}
		views, err := view.ViewProblems(ctx)
		if err != nil {
			return err
		}
		foreign, err := view.ForeignObjects(ctx)
		if err != nil {
			return err
		}
		if r, err = check(ctx, view, ids); err != nil {
			return err
		}
		r.Integrity, r.Indexes, r.Views = integrity, indexes, views
		for _, f := range foreign {
			r.Foreign = append(r.Foreign, f.String())
		}
		strays, unread, err := view.StrayRows(ctx)
		if err != nil {
			return err
		}
		r.Strays = strays
		r.unreadTables(unread)
		roots, err := view.IndexRoots(ctx)
		if err != nil {
			return err
		}
		damaged := r.damagedIndexes(integrity, roots)
		r.Indexes = append(r.Indexes, damaged...)
		r.Problems += len(integrity) + len(indexes) + len(damaged) + len(views) + len(foreign) + len(strays)
		return nil
	})
	return r, err
}

// Sessions is Check without SQLite's integrity check, which reads the
// whole file, and without the indexes.
func Sessions(ctx context.Context, d *db.DB, ids ...string) (Report, error) {
	var r Report
	err := d.ReadTx(ctx, func(view *db.DB) error {
		var err error
		r, err = check(ctx, view, ids)
		return err
	})
	return r, err
}

// Repaired is what Repair did.
type Repaired struct {
	// Rewrote counts the rows whose change columns were rewritten.
	Rewrote int `json:"rewrote"`
	// Indexes are the indexes made again from the schema's definition
	// (every index is rebuilt from its table besides).
	Indexes []string `json:"indexes,omitempty"`
	// Views are the views made again from the schema's definition.
	Views []string `json:"views,omitempty"`
	// Left are the sessions whose log is damaged, left as they were.
	Left []string `json:"left,omitempty"`
	// NoReindex says why the indexes were not rebuilt ("" when they were).
	NoReindex string `json:"noReindex,omitempty"`
}

// Repair rebuilds what is derived from the log, on a database opened for
// writing (so that no daemon serves it meanwhile): every index (made again
// from the schema's definition where one is missing or altered), and the
// change columns of rows whose replay gives another change, in sessions
// whose replay is consistent only. A session whose log is damaged is left
// as it is, and named. It returns the check it repaired from.
func Repair(ctx context.Context, d *db.DB) (Report, Repaired, error) {
	var done Repaired
	r, err := Check(ctx, d)
	if err != nil {
		return r, done, err
	}
	if r.Schema != "" {
		return r, done, fmt.Errorf("%s; repair upgrades nothing", r.Schema)
	}
	if len(r.Unreadable) > 0 {
		// A REINDEX would drop the keys of the rows it cannot read, the
		// last record of whose they were.
		return r, done, fmt.Errorf("%s; repair changes nothing of a file SQLite cannot read whole", strings.Join(r.Unreadable, "; "))
	}
	// The indexes first (the tasks view reads through one), and only
	// from rows that checked.
	if done.NoReindex = reindexUnsafe(r); done.NoReindex == "" {
		if done.Indexes, err = d.RebuildIndexes(ctx); err != nil {
			return r, done, err
		}
	}
	if done.Views, err = d.RebuildViews(ctx); err != nil {
		return r, done, err
	}
	var fixes []tasksessiond.Append
	for _, s := range r.Sessions {
		if s.LogDamaged {
			done.Left = append(done.Left, s.ID)
			continue
		}
		fixes = append(fixes, r.fixes[s.ID]...)
	}
	if err := d.RewriteChanges(ctx, fixes); err != nil {
		return r, done, err
	}
	done.Rewrote = len(fixes)
	return r, done, nil
}

// checking is one check under way: the sessions' rows as stored, the
// checkers of the sessions replayed, and what the cross checks need of
// them.
type checking struct {
	r        Report
	lineage  map[string]db.Lineage
	children map[string][]string // by parent_id
	named    map[string][]string // by successor_id: who names a session as its successor
	checkers map[string]*checker
	cycles   map[string][]string // the lineage's cycles, by session (see cycleOf)
	heads    map[string]tasksessiond.LogHead
	// snapUnread are the sessions whose snapshot SQLite could not read.
	snapUnread map[string]*db.UnreadableSnapshotError
}

func check(ctx context.Context, d *db.DB, ids []string) (Report, error) {
	rows, err := d.Lineages(ctx)
	if err != nil {
		return Report{}, err
	}
	heads, err := d.LogHeads(ctx)
	if err != nil {
		return Report{}, err
	}
	c := &checking{lineage: make(map[string]db.Lineage, len(rows)), children: map[string][]string{}, named: map[string][]string{},
		checkers: map[string]*checker{}, r: Report{fixes: map[string][]tasksessiond.Append{}, unread: map[string]bool{}}, heads: heads,
		snapUnread: map[string]*db.UnreadableSnapshotError{}}
	for _, l := range rows {
		c.lineage[l.ID] = l
		if l.ParentID != "" {
			c.children[l.ParentID] = append(c.children[l.ParentID], l.ID)
		}
		if l.SuccessorID != "" {
			c.named[l.SuccessorID] = append(c.named[l.SuccessorID], l.ID)
		}
	}
	all := len(ids) == 0
	if all {
		for _, l := range rows {
			ids = append(ids, l.ID)
		}
	}
	// A successor is checked against its parent's replay: the parents of
	// the sessions asked for are replayed too, and not reported.
	want := make(map[string]bool, len(ids))
	replayed := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id], replayed[id] = true, true
		if p := c.parentOf(id); p != "" {
			replayed[p] = true
		}
	}
	var cur *checker
	orphan := ""
	err = d.EachLogged(ctx, func(row *tasksessiond.Call, createdAt string) error {
		if cur != nil && cur.out.ID == row.SessionID {
			cur.row(row, createdAt)
			return nil
		}
		if cur != nil {
			cur.finish(ctx, d)
			cur = nil
		}
		if _, ok := c.lineage[row.SessionID]; !ok {
			if all && row.SessionID != orphan {
				orphan = row.SessionID
				c.r.Orphans = append(c.r.Orphans, row.SessionID)
				c.r.Problems++
			}
			return nil
		}
		if !replayed[row.SessionID] {
			return nil
		}
		cur = c.start(ctx, d, row.SessionID)
		cur.row(row, createdAt)
		return nil
	})
	var unread *db.UnreadableError
	if errors.As(err, &unread) {
		err = nil // what could be read was; said below
	}
	if err != nil {
		return Report{}, err
	}
	if cur != nil {
		cur.finish(ctx, d)
	}
	// Sessions without a row of their own.
	for id := range replayed {
		if _, ok := c.checkers[id]; ok {
			continue
		}
		if _, ok := c.lineage[id]; !ok {
			if want[id] {
				c.r.add(Session{ID: id, Problems: []string{"no such session"}})
			}
			continue
		}
		c.start(ctx, d, id).finish(ctx, d)
	}
	c.unreadable(unread, want)
	c.unreadableSnapshots()
	for id := range want {
		if k, ok := c.checkers[id]; ok {
			c.lineageOf(k)
			c.snapshotOf(k)
		}
	}
	for id := range want {
		if k, ok := c.checkers[id]; ok {
			c.r.add(k.out)
			c.r.fixes[id] = k.fixes
		}
	}
	slices.SortFunc(c.r.Sessions, func(a, b Session) int { return strings.Compare(a.ID, b.ID) })
	return c.r, nil
}

func (r *Report) add(s Session) {
	r.Problems += len(s.Problems)
	r.Sessions = append(r.Sessions, s)
}

// parentOf is a session's parent as the daemon reads it: its parent_id,
// or else the session naming it as its successor.
func (c *checking) parentOf(id string) string {
	if p := c.lineage[id].ParentID; p != "" {
		return p
	}
	if named := c.named[id]; len(named) > 0 {
		return named[0]
	}
	return ""
}

// lineageOf checks a session's lineage columns against each other and its
// snapshot: a compaction sets them all in one transaction, so only a hand
// edit makes them disagree. Each problem says the statement that sets the
// column back; repair does not guess which of two columns is right.
func (c *checking) lineageOf(k *checker) {
	if c.cycleOf(k) {
		return
	}
	l := c.lineage[k.out.ID]
	q := quote
	k.badTime("its record", "created_at", l.CreatedAt, fmt.Sprintf("UPDATE sessions SET created_at = '%s' WHERE id = %s", noTime, q(l.ID)))
	if l.ParentID != "" {
		p, ok := c.lineage[l.ParentID]
		switch {
		case !ok:
			k.problem(true, "its parent_id names %s, which does not exist", l.ParentID)
		case p.SuccessorID != l.ID:
			fix := fmt.Sprintf("UPDATE sessions SET successor_id = %s WHERE id = %s", q(l.ID), q(p.ID))
			if p.SuccessorID != "" {
				fix = "its parent names another successor: the lineage forks; restore a backup"
			}
			k.problem(false, "its parent %s names successor %q, not it (sqlite3: %s)", p.ID, p.SuccessorID, fix)
		}
		if ok && p.Status != tasksessiond.SessionCompacted {
			k.problem(false, "its parent %s has status %q though it was compacted into it (sqlite3: UPDATE sessions SET status = 'compacted' WHERE id = %s)", p.ID, p.Status, q(p.ID))
		}
		if !l.Snapshot && l.SnapshotUnknown && c.snapUnread[l.ID] == nil {
			k.problem(true, "it was compacted from %s but its snapshot (the tasks it started from) is not found by its key, and snapshots does not read whole: the daemon refuses to serve it; restore a backup", l.ParentID)
		} else if !l.Snapshot && c.snapUnread[l.ID] == nil {
			k.problem(true, "it was compacted from %s but its snapshot (the tasks it started from) is gone: the daemon refuses to serve it; restore a backup", l.ParentID)
		}
	} else if named := c.named[l.ID]; len(named) > 0 && l.Snapshot {
		k.problem(false, "session %s names it as its successor, but its parent_id is empty (sqlite3: UPDATE sessions SET parent_id = %s WHERE id = %s)", named[0], q(named[0]), q(l.ID))
	} else if len(named) > 0 {
		// Never compacted into (no snapshot): the successor_id naming it
		// is the edit, reported at the session whose column it is.
	} else if l.Snapshot {
		k.problem(true, "it has a snapshot, which only a compaction writes, but no session is its parent: the daemon refuses to serve it; restore a backup")
	}
	if l.SuccessorID != "" {
		s, ok := c.lineage[l.SuccessorID]
		switch {
		case !ok:
			k.problem(false, "its successor %s does not exist", l.SuccessorID)
		case !s.Snapshot && s.ParentID != l.ID:
			k.problem(false, "it names successor %s, which was never compacted from it (it has no snapshot, and its parent_id does not name it) (sqlite3: %s)", l.SuccessorID, c.unname(l, l.SuccessorID))
			return
		case s.Snapshot && s.ParentID != "" && s.ParentID != l.ID:
			// Compacted from another session (its parent_id and snapshot
			// say so): this successor_id was set by hand, and the daemon
			// would follow it and serve that session's list as this one's.
			k.problem(false, "it names successor %s, which was compacted from %s, not from it (sqlite3: %s)", l.SuccessorID, s.ParentID, c.unname(l, l.SuccessorID))
			return
		}
		if l.Status != tasksessiond.SessionCompacted {
			k.problem(false, "it names successor %s but has status %q (sqlite3: UPDATE sessions SET status = 'compacted' WHERE id = %s)", l.SuccessorID, l.Status, q(l.ID))
		}
	} else if kids := c.children[l.ID]; len(kids) > 0 {
		k.problem(false, "session %s was compacted from it, but its successor_id is empty (sqlite3: UPDATE sessions SET successor_id = %s, status = 'compacted' WHERE id = %s)", kids[0], q(kids[0]), q(l.ID))
	} else if l.Status == tasksessiond.SessionCompacted {
		k.problem(false, "compacted but has no successor")
	}
}

// snapshotOf compares a successor's first tasks with its parent's log
// replayed: a compaction copies the one into the other. The successor
// serves its snapshot (it is the head of its own log), so a difference is
// reported here, at the session whose snapshot it is, and nothing is
// rebuilt from either.
func (c *checking) snapshotOf(k *checker) {
	parent := c.parentOf(k.out.ID)
	if parent == "" || k.snap == nil {
		return
	}
	p, ok := c.checkers[parent]
	if !ok || p.broken || k.unrestorable {
		return
	}
	if diff := p.end.differs(*k.snap); diff != "" {
		hint := "its snapshot rows were edited by hand?"
		if p.afterSeal > 0 {
			hint = fmt.Sprintf("%s has %d rows logged after it was made, which it never got", parent, p.afterSeal)
		}
		k.problem(true, "its snapshot differs from its parent %s's log replayed: %s (%s); repair changes nothing of it: restore a backup to go back", parent, diff, hint)
	}
}

// list is a replayed list as the cross checks keep it: each task's hash,
// in taskid order, and the next taskid.
type list struct {
	ids    []int
	hashes []uint64
	next   int
}

func digest(tasks []tasksessiond.Task, next int) list {
	l := list{ids: make([]int, len(tasks)), hashes: make([]uint64, len(tasks)), next: next}
	for i, t := range tasks {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s", t.Taskid, t.Status, t.Subject, t.Description)
		l.ids[i], l.hashes[i] = t.Taskid, h.Sum64()
	}
	return l
}

// differs says how the snapshot s differs from l ("" when it does not).
func (l list) differs(s list) string {
	head := fmt.Sprintf("the parent replays to %d tasks (next #%d), the snapshot holds %d (next #%d)", len(l.ids), l.next, len(s.ids), s.next)
	for i := range min(len(l.ids), len(s.ids)) {
		switch {
		case l.ids[i] < s.ids[i]:
			return fmt.Sprintf("%s; task #%d is missing from the snapshot", head, l.ids[i])
		case l.ids[i] > s.ids[i]:
			return fmt.Sprintf("%s; the snapshot has a task #%d the parent never had", head, s.ids[i])
		case l.hashes[i] != s.hashes[i]:
			return fmt.Sprintf("%s; task #%d differs", head, l.ids[i])
		}
	}
	switch {
	case len(l.ids) > len(s.ids):
		return fmt.Sprintf("%s; task #%d is missing from the snapshot", head, l.ids[len(s.ids)])
	case len(l.ids) < len(s.ids):
		return fmt.Sprintf("%s; the snapshot has a task #%d the parent never had", head, s.ids[len(l.ids)])
	case l.next != s.next:
		return head
	}
	return ""
}

// checker replays one session, row by row, as the daemon loads it.
type checker struct {
	c      *checking
	out    Session
	snap   *list // its snapshot's tasks, as the cross checks keep them
	st     *store.Store
	broken bool // nothing to replay onto
	// unrestorable: its snapshot is not a list at all (reported as such).
	unrestorable bool
	fixes        []tasksessiond.Append
	nextSeq      int64
	// end is the replayed list, kept for a session with a successor.
	end list
	// afterSeal counts rows stamped later than its successor was made.
	afterSeal int
	sealedAt  string // its successor's created_at
	// chain checks the log's checksums as the daemon does; chainBroken
	// once it has failed.
	chain       *tasksessiond.ChainCheck
	chainBroken bool
}

func (c *checking) start(ctx context.Context, d *db.DB, id string) *checker {
	head, ok := c.heads[id]
	head.Missing = !ok
	k := &checker{c: c, out: Session{ID: id}, st: store.New(), nextSeq: 1,
		chain: &tasksessiond.ChainCheck{SessionID: id, Head: head}}
	c.checkers[id] = k
	if kids := c.children[id]; len(kids) > 0 {
		k.sealedAt = c.lineage[kids[0]].CreatedAt
	} else if s := c.lineage[id].SuccessorID; s != "" {
		k.sealedAt = c.lineage[s].CreatedAt
	}
	var unread *db.UnreadableSnapshotError
	if _, err := d.LoadSession(ctx, id); err != nil && !errors.As(err, &unread) { // that one is said with its snapshot
		k.problem(true, "its record does not read (%v): the daemon cannot load it", err)
	}
	snap, err := d.Snapshot(ctx, id)
	if err != nil {
		if errors.As(err, &unread) {
			c.snapUnread[id] = unread
			k.problem(true, "its snapshot does not read: %v: the tasks it started from are lost; the daemon cannot load it: restore a backup", err)
		} else {
			k.problem(true, "its snapshot does not read: %v", err)
		}
		// Its chain starts from its snapshot: it cannot be checked, and
		// a break found without it would be no row's.
		k.broken, k.chain = true, nil
		return k
	}
	if snap != nil {
		l := digest(snap.Tasks, snap.NextTaskid)
		k.snap = &l
		if l := c.lineage[id]; l.SnapshotUnknown {
			l.Snapshot = true // its key found it past the malformed page
			c.lineage[id] = l
		}
	}
	if snap == nil && c.lineage[id].Snapshot {
		// Its row is in snapshots (read from the table), but the key
		// does not find it: the daemon, which reads through the key,
		// refuses it. Its log cannot be checked without it, so repair
		// does not reindex from it.
		k.problem(true, "its snapshot's row is in snapshots, but the table's key does not find it (an index is damaged: see the integrity check): the daemon cannot load it, and its log cannot be checked without it")
		k.broken, k.chain = true, nil
		return k
	}
	k.chain.Start = tasksessiond.ChainStart(snap)
	switch {
	case snap != nil:
		if k.st, err = store.Restore(*snap); err != nil {
			k.problem(true, "its snapshot does not restore: %v", err)
			k.st, k.broken, k.unrestorable = store.New(), true, true
		}
	case c.parentOf(id) != "":
		k.broken = true // reported with its lineage
	}
	return k
}

// problem records a problem; inLog marks the log itself damaged.
func (k *checker) problem(inLog bool, format string, args ...any) {
	k.out.Problems = append(k.out.Problems, fmt.Sprintf(format, args...))
	k.out.LogDamaged = k.out.LogDamaged || inLog
}

func (k *checker) row(row *tasksessiond.Call, createdAt string) {
	k.out.Rows++
	k.chainRow(row)
	k.rowTime(row, createdAt)
	if row.Seq != k.nextSeq {
		k.problem(true, "log has seq %d where %d was expected (a row deleted or renumbered)", row.Seq, k.nextSeq)
	}
	k.nextSeq = row.Seq + 1
	if k.sealedAt != "" && createdAt > k.sealedAt {
		// A hint only, should its successor's snapshot differ: a clock
		// set back makes this count rows logged before the seal too.
		k.afterSeal++
	}
	if k.broken {
		return
	}
	step := replay.Check(k.st, replay.Call{Seq: row.Seq, Name: row.Name, Arguments: row.Arguments, IsError: row.IsError, Change: row.Change})
	step.Count(&k.out.Replay)
	// What the row's change columns must hold: the replayed task of an
	// applied write, nothing for reads, errors and what no longer decodes.
	var task *tasksessiond.Task
	if step.Outcome == replay.Applied {
		task = step.Task
	}
	fix := step.Call.Append(tasksessiond.Call{SessionID: row.SessionID, Seq: row.Seq}, task)
	want := fix.Change()
	agrees := true
	switch {
	case step.Divergence != nil && step.Outcome != replay.Applied:
		// A write that succeeded then fails now: a row before it is gone
		// or was changed.
		k.problem(true, "replay diverges at %s", step.Divergence)
		agrees = false
	case step.Divergence != nil:
		k.problem(false, "replay diverges at %s (its change columns: tasksessiond fsck --repair rewrites them)", step.Divergence)
	case !row.Change.Equal(want) && !nullsOver(row.Change, want):
		k.problem(false, "seq %d: its change columns hold %s, its arguments replay to %s (tasksessiond fsck --repair rewrites them)",
			row.Seq, describe(row.Change), describe(want))
	}
	if task != nil {
		if msg := checkResult(row.Result, *task); msg != "" {
			k.problem(true, "seq %d: %s: the row's arguments or result were edited; the log disagrees with itself", row.Seq, msg)
			agrees = false
		}
	}
	if !row.Change.Equal(want) {
		if nullsOver(row.Change, want) {
			k.problem(false, "seq %d: its change columns hold %s, its arguments replay to %s; repair leaves them as they are, as it writes no NULL over a value (the daemon reads the arguments, not these)",
				row.Seq, describe(row.Change), describe(want))
		} else {
			k.fixes = append(k.fixes, fix)
		}
		agrees = false
	}
	if agrees {
		k.out.Agree++
	}
}

// checkResult compares what a write's result told the model with the task
// its replay made ("" when they agree, or when the result, from an older
// version, names no task). A result names the task without its
// description; one from an older version echoed it too (shortened as
// Echo does), and then that is compared as well.
func checkResult(result json.RawMessage, t tasksessiond.Task) string {
	var r struct {
		StructuredContent *struct {
			Task *struct {
				tasksessiond.Task
				Description *string `json:"description"`
			} `json:"task"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return "its result is not JSON"
	}
	if r.IsError {
		return "it is logged as a success, but its result told the model it failed"
	}
	if r.StructuredContent == nil || r.StructuredContent.Task == nil {
		return ""
	}
	told, want := r.StructuredContent.Task.Task, tools.Echo(t)
	if d := r.StructuredContent.Task.Description; d != nil {
		told.Description = *d
	} else {
		want.Description = ""
	}
	if told != want {
		return fmt.Sprintf("its result told the model %+v, its arguments replay to %+v", told, want)
	}
	return ""
}

// finish compares what is read beside the log with the replay. Errors
// reading it are problems too: fsck goes on.
func (k *checker) finish(ctx context.Context, d *db.DB) {
	k.chainEnd()
	k.out.Tasks = k.st.Len()
	if k.broken {
		k.st = nil
		return
	}
	replayed := k.st.List()
	if k.sealedAt != "" {
		k.end = digest(replayed, k.st.NextTaskid())
	}
	// Every session's checker is kept for the cross checks: its list is
	// not (a check of every session would hold every task).
	defer func() { k.st = nil }()
	viewed, err := d.Tasks(ctx, k.out.ID)
	switch {
	case err != nil:
		k.problem(false, "the tasks view cannot be read: %v (tasksessiond fsck --repair rebuilds what it reads)", err)
	case len(viewed) != len(replayed):
		k.problem(false, "the tasks view holds %d tasks, the log replays to %d", len(viewed), len(replayed))
	}
	for i := range min(len(viewed), len(replayed)) {
		if viewed[i] != replayed[i] {
			k.problem(false, "the tasks view has %+v, the log replays to %+v", viewed[i], replayed[i])
		}
	}
	if n, err := d.CountCalls(ctx, k.out.ID); err != nil {
		k.problem(false, "the log's key cannot be read: %v", err)
	} else if n != k.out.Rows {
		k.problem(false, "the log's key finds %d rows, the table holds %d (tasksessiond fsck --repair rebuilds the indexes)", n, k.out.Rows)
	}
}

func describe(ch *tasksessiond.Change) string {
	if ch == nil {
		return "no change"
	}
	return ch.String()
}
