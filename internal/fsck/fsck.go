// Package fsck checks a database against its own log. It reads every row
// of the log from the table itself (not through an index), replays each
// session from its snapshot, and compares with that replay everything read
// beside it: each row's change columns, the tasks view, the log's key, and
// a sealed session's successor's snapshot; SQLite's integrity check covers
// every index. Repair rebuilds what is derived from the log.
package fsck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/replay"
	"github.com/tasksessiond/tasksessiond/internal/store"
)

// Session is what checking one session found.
type Session struct {
	ID       string                    `json:"id"`
	Rows     int                       `json:"rows"`
	Tasks    int                       `json:"tasks"`
	Replay   tasksessiond.ReplayReport `json:"replay"`
	Problems []string                  `json:"problems,omitempty"`
}

// Report is what a check found.
type Report struct {
	Integrity []string  `json:"integrity,omitempty"` // SQLite's findings; empty when ok
	Sessions  []Session `json:"sessions"`
	// Orphans are log rows of sessions that do not exist.
	Orphans  []string `json:"orphans,omitempty"`
	Problems int      `json:"problems"`
	// fixes are the rows whose change columns disagree with their replay,
	// as the replay gives them.
	fixes []tasksessiond.Append
}

// OK reports whether nothing was found.
func (r Report) OK() bool { return r.Problems == 0 }

// Check runs SQLite's integrity check and checks the sessions given, or
// every session when none is, all as of one moment (one read transaction),
// even beside a daemon that writes.
func Check(ctx context.Context, d *db.DB, ids ...string) (Report, error) {
	integrity, err := d.IntegrityCheck(ctx)
	if err != nil {
		return Report{}, err
	}
	r, err := Sessions(ctx, d, ids...)
	r.Integrity = integrity
	r.Problems += len(integrity)
	return r, err
}

// Sessions is Check without SQLite's integrity check, which reads the
// whole file.
func Sessions(ctx context.Context, d *db.DB, ids ...string) (Report, error) {
	var r Report
	err := d.ReadTx(ctx, func(view *db.DB) error {
		var err error
		r, err = check(ctx, view, ids)
		return err
	})
	return r, err
}

// Repair rebuilds what is derived from the log, on a database opened for
// writing (so that no daemon serves it meanwhile): the change columns of
// rows whose arguments replay to another change, and every index. It
// returns the check it repaired from and how many rows it rewrote.
func Repair(ctx context.Context, d *db.DB) (Report, int, error) {
	r, err := Check(ctx, d)
	if err != nil {
		return r, 0, err
	}
	if err := d.RewriteChanges(ctx, r.fixes); err != nil {
		return r, 0, err
	}
	return r, len(r.fixes), d.Reindex(ctx)
}

func check(ctx context.Context, d *db.DB, ids []string) (Report, error) {
	var r Report
	all := len(ids) == 0
	if all {
		var err error
		if ids, err = d.SessionIDs(ctx); err != nil {
			return r, err
		}
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	done := make(map[string]bool, len(ids))
	var cur *checker
	finish := func() error {
		if cur == nil {
			return nil
		}
		s, err := cur.finish(ctx, d)
		if err != nil {
			return err
		}
		r.add(s, cur.fixes)
		done[cur.out.ID] = true
		cur = nil
		return nil
	}
	orphan := ""
	err := d.EachLogged(ctx, func(row *tasksessiond.Call) error {
		if cur != nil && cur.out.ID == row.SessionID {
			cur.row(row)
			return nil
		}
		if err := finish(); err != nil {
			return err
		}
		if !want[row.SessionID] {
			if all && row.SessionID != orphan {
				orphan = row.SessionID
				r.Orphans = append(r.Orphans, row.SessionID)
				r.Problems++
			}
			return nil
		}
		var err error
		if cur, err = start(ctx, d, row.SessionID); err != nil {
			return err
		}
		cur.row(row)
		return nil
	})
	if err == nil {
		err = finish()
	}
	if err != nil {
		return r, err
	}
	// Sessions without a row of their own.
	for _, id := range ids {
		if done[id] {
			continue
		}
		c, err := start(ctx, d, id)
		if errors.Is(err, tasksessiond.ErrNotFound) {
			r.add(Session{ID: id, Problems: []string{"no such session"}}, nil)
			continue
		}
		if err != nil {
			return r, err
		}
		s, err := c.finish(ctx, d)
		if err != nil {
			return r, err
		}
		r.add(s, nil)
	}
	slices.SortFunc(r.Sessions, func(a, b Session) int { return strings.Compare(a.ID, b.ID) })
	return r, nil
}

func (r *Report) add(s Session, fixes []tasksessiond.Append) {
	r.Problems += len(s.Problems)
	r.Sessions = append(r.Sessions, s)
	r.fixes = append(r.fixes, fixes...)
}

// checker replays one session, row by row, as the daemon loads it.
type checker struct {
	out     Session
	rec     tasksessiond.Session
	st      *store.Store
	broken  bool // its snapshot does not restore
	fixes   []tasksessiond.Append
	nextSeq int64
}

func start(ctx context.Context, d *db.DB, id string) (*checker, error) {
	rec, err := d.LoadSession(ctx, id)
	if err != nil {
		return nil, err
	}
	c := &checker{out: Session{ID: id}, rec: rec, st: store.New(), nextSeq: 1}
	if rec.Snapshot != nil {
		if c.st, err = store.Restore(*rec.Snapshot); err != nil {
			c.out.Problems = append(c.out.Problems, fmt.Sprintf("its snapshot does not restore: %v", err))
			c.st, c.broken = store.New(), true
		}
	}
	return c, nil
}

func (c *checker) row(row *tasksessiond.Call) {
	c.out.Rows++
	if row.Seq != c.nextSeq {
		c.out.Problems = append(c.out.Problems, fmt.Sprintf("log has seq %d where %d was expected", row.Seq, c.nextSeq))
	}
	c.nextSeq = row.Seq + 1
	if c.broken { // nothing to replay onto
		return
	}
	step := replay.Check(c.st, replay.Call{Seq: row.Seq, Name: row.Name, Arguments: row.Arguments, IsError: row.IsError, Change: row.Change})
	step.Count(&c.out.Replay)
	// What the row's change columns must hold: the replayed task of an
	// applied write, nothing for reads, errors and what no longer decodes.
	var task *tasksessiond.Task
	if step.Outcome == replay.Applied {
		task = step.Task
	}
	fix := step.Call.Append(tasksessiond.Call{SessionID: row.SessionID, Seq: row.Seq}, task)
	want := fix.Change()
	switch {
	case step.Divergence != nil:
		c.out.Problems = append(c.out.Problems, "replay diverges at "+step.Divergence.String())
	case !row.Change.Equal(want):
		c.out.Problems = append(c.out.Problems, fmt.Sprintf("seq %d: its change columns hold %s, its arguments replay to %s (tasksessiond fsck --repair rewrites them)",
			row.Seq, describe(row.Change), describe(want)))
	}
	if !row.Change.Equal(want) {
		c.fixes = append(c.fixes, fix)
	}
}

// finish compares what is read beside the log with the replay.
func (c *checker) finish(ctx context.Context, d *db.DB) (Session, error) {
	out := c.out
	out.Tasks = c.st.Len()
	if c.broken {
		return out, nil
	}
	replayed := c.st.List()
	viewed, err := d.Tasks(ctx, out.ID)
	if err != nil {
		return out, err
	}
	if len(viewed) != len(replayed) {
		out.Problems = append(out.Problems, fmt.Sprintf("the tasks view holds %d tasks, the log replays to %d", len(viewed), len(replayed)))
	}
	for i := range min(len(viewed), len(replayed)) {
		if viewed[i] != replayed[i] {
			out.Problems = append(out.Problems, fmt.Sprintf("the tasks view has %+v, the log replays to %+v", viewed[i], replayed[i]))
		}
	}
	if n, err := d.CountCalls(ctx, out.ID); err != nil {
		return out, err
	} else if n != out.Rows {
		out.Problems = append(out.Problems, fmt.Sprintf("the log's key finds %d rows, the table holds %d (tasksessiond fsck --repair rebuilds the indexes)", n, out.Rows))
	}
	rec := c.rec
	if rec.Status == tasksessiond.SessionCompacted && rec.SuccessorID == "" {
		out.Problems = append(out.Problems, "compacted but has no successor")
	}
	if rec.Status == tasksessiond.SessionCompacted && rec.SuccessorID != "" {
		// The successor started from this session's list as sealed: a
		// row logged here after the seal (a second daemon on the file, a
		// hand edit) would be lost to the lineage; the two then differ.
		succ, err := d.LoadSession(ctx, rec.SuccessorID)
		switch {
		case errors.Is(err, tasksessiond.ErrNotFound):
			out.Problems = append(out.Problems, "its successor "+rec.SuccessorID+" does not exist")
		case err != nil:
			return out, err
		case succ.Snapshot == nil:
			out.Problems = append(out.Problems, "its successor "+rec.SuccessorID+" has no snapshot")
		case restores(*succ.Snapshot) && (succ.Snapshot.NextTaskid != c.st.NextTaskid() || !slices.Equal(succ.Snapshot.Tasks, replayed)):
			out.Problems = append(out.Problems, fmt.Sprintf("its log replays to %d tasks (next #%d), its successor %s started from %d (next #%d): rows logged after its seal?",
				c.st.Len(), c.st.NextTaskid(), rec.SuccessorID, len(succ.Snapshot.Tasks), succ.Snapshot.NextTaskid))
		}
	}
	return out, nil
}

func describe(ch *tasksessiond.Change) string {
	if ch == nil {
		return "no change"
	}
	return ch.String()
}

// restores reports whether snap is a store at all; a broken one is the
// successor's own problem, reported there, not compared here.
func restores(snap tasksessiond.Snapshot) bool {
	_, err := store.Restore(snap)
	return err == nil
}
