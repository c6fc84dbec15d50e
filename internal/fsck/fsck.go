// Package fsck checks a database: for each session it replays the log
// (seeded from the compaction snapshot), compares every applied write with
// the task its recorded result holds and the final tasks with the tasks
// projection, all in one read transaction; and it runs SQLite's own
// integrity check.
package fsck

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/record"
	"github.com/tasksessiond/tasksessiond/internal/replay"
	"github.com/tasksessiond/tasksessiond/internal/store"
)

// Session is what checking one session found.
type Session struct {
	ID       string        `json:"id"`
	Rows     int           `json:"rows"`
	Tasks    int           `json:"tasks"`
	Replay   replay.Report `json:"replay"`
	Problems []string      `json:"problems,omitempty"`
}

// Report is what a check found.
type Report struct {
	Integrity []string  `json:"integrity,omitempty"` // SQLite's findings; empty when ok
	Sessions  []Session `json:"sessions"`
	Problems  int       `json:"problems"`
}

// OK reports whether nothing was found.
func (r Report) OK() bool { return r.Problems == 0 }

// Check runs SQLite's integrity check and checks the sessions given, or
// every session when none is.
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

// Sessions checks the sessions given (every session when none is) without
// the whole-file integrity check.
func Sessions(ctx context.Context, d *db.DB, ids ...string) (Report, error) {
	var r Report
	var err error
	if len(ids) == 0 {
		if ids, err = allIDs(ctx, d); err != nil {
			return r, err
		}
	}
	for _, id := range ids {
		// One read transaction a session: the log and the projection are
		// compared as of one moment, even beside a daemon that writes.
		var s Session
		err := d.ReadTx(ctx, func(view *db.DB) error {
			var err error
			s, err = checkSession(ctx, view, id)
			return err
		})
		if err != nil {
			return r, err
		}
		r.Problems += len(s.Problems)
		r.Sessions = append(r.Sessions, s)
	}
	return r, nil
}

func allIDs(ctx context.Context, d *db.DB) ([]string, error) {
	var ids []string
	cursor := ""
	for {
		page, next, err := d.ListSessions(ctx, db.ListFilter{Limit: 1000, Cursor: cursor})
		if err != nil {
			return nil, err
		}
		for _, s := range page {
			ids = append(ids, s.ID)
		}
		if next == "" {
			return ids, nil
		}
		cursor = next
	}
}

func checkSession(ctx context.Context, d *db.DB, id string) (Session, error) {
	out := Session{ID: id}
	// Rebuilt as the daemon loads it; the log is streamed, never held whole.
	l, err := replay.Session(ctx, d, id, replay.Options{CheckAll: true, Each: func(row *record.Call) {
		out.Rows++
		if want := int64(out.Rows); row.Seq != want {
			out.Problems = append(out.Problems, fmt.Sprintf("log has seq %d where %d was expected", row.Seq, want))
		}
	}})
	if errors.Is(err, replay.ErrSnapshot) {
		out.Problems = append(out.Problems, err.Error())
		return out, nil
	}
	if err != nil {
		return out, err
	}
	rec, st := l.Session, l.Store
	out.Replay = l.Report
	for _, dv := range out.Replay.Divergences {
		out.Problems = append(out.Problems, "replay diverges at "+dv.String())
	}
	out.Tasks = st.Len()

	projected, err := d.Tasks(ctx, id)
	if err != nil {
		return out, err
	}
	replayed := st.List()
	if len(projected) != len(replayed) {
		out.Problems = append(out.Problems, fmt.Sprintf("tasks projection holds %d tasks, replay gives %d", len(projected), len(replayed)))
	}
	for i := range min(len(projected), len(replayed)) {
		if projected[i] != replayed[i] {
			out.Problems = append(out.Problems, fmt.Sprintf("tasks projection has %+v, replay gives %+v", projected[i], replayed[i]))
		}
	}
	if rec.Status == record.StatusCompacted && rec.SuccessorID == "" {
		out.Problems = append(out.Problems, "compacted but has no successor")
	}
	if rec.Status == record.StatusCompacted && rec.SuccessorID != "" {
		// The successor started from this session's list as sealed: a
		// row logged here after the seal (a second daemon on the file, a
		// hand edit) would be lost to the lineage; the two then differ.
		succ, err := d.LoadSession(ctx, rec.SuccessorID)
		switch {
		case errors.Is(err, db.ErrNotFound):
			out.Problems = append(out.Problems, "its successor "+rec.SuccessorID+" does not exist")
		case err != nil:
			return out, err
		case succ.Snapshot == nil:
			out.Problems = append(out.Problems, "its successor "+rec.SuccessorID+" has no snapshot")
		case restores(*succ.Snapshot) && (succ.Snapshot.NextTaskid != st.NextTaskid() || !slices.Equal(succ.Snapshot.Tasks, replayed)):
			out.Problems = append(out.Problems, fmt.Sprintf("rows logged after its seal: its log replays to %d tasks (next #%d), its successor %s started from %d (next #%d)",
				st.Len(), st.NextTaskid(), rec.SuccessorID, len(succ.Snapshot.Tasks), succ.Snapshot.NextTaskid))
		}
	}
	return out, nil
}

// restores reports whether snap is a store at all; a broken one is the
// successor's own problem, reported there, not compared here.
func restores(snap store.Snapshot) bool {
	_, err := store.Restore(snap)
	return err == nil
}
