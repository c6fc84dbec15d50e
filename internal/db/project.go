package db

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/tasksessiond/tasksessiond/internal/store"
)

// The tasks projection is kept off the hot path. A commit writes the log
// rows only; the writer remembers each committed task change, and every
// Options.ProjectInterval (or once projectBatch changes wait) writes the latest
// state of each changed task to task_projection in one transaction, with
// each session's projected_seq. The tasks view lays the log's rows past
// projected_seq over the projection, so it is exact at every moment; the
// projection only keeps that tail short. Many changes to one session then
// share a page, and a task changed twice is written once.

// projectBatch is how many task changes may wait before the projector
// runs whatever the time.
const projectBatch = 4096

// projected is a task change waiting for the projector.
type projected struct {
	task store.Task
	at   string // the commit's time
}

// pendingProjection is owned by the writer goroutine.
type pendingProjection struct {
	tasks   map[string]map[int]projected // session → taskid → latest
	lastSeq map[string]int64             // session → seq of its last committed row
	n       int
	last    time.Time
}

func newPendingProjection() pendingProjection {
	return pendingProjection{tasks: map[string]map[int]projected{}, lastSeq: map[string]int64{}, last: time.Now()}
}

// note records a committed group's task changes.
func (p *pendingProjection) note(group []*appendReq, now time.Time) {
	ts := formatTime(now)
	for _, r := range group {
		for _, a := range r.appends {
			c := a.Call
			p.lastSeq[c.SessionID] = max(p.lastSeq[c.SessionID], c.Seq)
			if a.Task == nil {
				continue
			}
			m := p.tasks[c.SessionID]
			if m == nil {
				m = map[int]projected{}
				p.tasks[c.SessionID] = m
			}
			m[a.Task.Taskid] = projected{task: *a.Task, at: ts}
			p.n++
		}
	}
}

// due reports whether the projector should run now.
func (p *pendingProjection) due(every time.Duration) bool {
	return len(p.lastSeq) > 0 && (p.n >= projectBatch || time.Since(p.last) >= every)
}

// project writes the pending changes to task_projection. On failure they
// stay pending (the tasks view is exact regardless) and are tried again.
func (d *DB) project(ctx context.Context) {
	p := &d.proj
	p.last = time.Now()
	if len(p.lastSeq) == 0 {
		return
	}
	if err := d.projectTx(ctx, p.tasks, p.lastSeq); err != nil {
		if !d.projectFailing {
			d.log.Warn("projecting tasks failed; the tasks view stays exact, the projection will catch up", slog.Any("err", err))
			d.projectFailing = true
		}
		return
	}
	if d.projectFailing {
		d.log.Info("projecting tasks works again")
		d.projectFailing = false
	}
	*p = newPendingProjection()
}

func (d *DB) projectTx(ctx context.Context, tasks map[string]map[int]projected, lastSeq map[string]int64) error {
	tx, err := d.w.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("project: begin: %w", err)
	}
	defer tx.Rollback()
	for sid, m := range tasks {
		for _, t := range m {
			if _, err := tx.StmtContext(ctx, d.stmts.upsertTask).ExecContext(ctx,
				sid, t.task.Taskid, string(t.task.Status), t.task.Subject, t.task.Description, t.at, t.at); err != nil {
				return fmt.Errorf("project task %s/%d: %w", sid, t.task.Taskid, err)
			}
		}
	}
	for sid, seq := range lastSeq {
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET projected_seq = max(projected_seq, ?) WHERE id = ?`, seq, sid); err != nil {
			return fmt.Errorf("project %s: %w", sid, err)
		}
	}
	// Every committed row has been noted by now (the projector runs between
	// the writer's commits; other writers add no task changes).
	if _, err := tx.ExecContext(ctx, `UPDATE projection_state SET through_rowid = coalesce((SELECT max(rowid) FROM tool_calls), 0)`); err != nil {
		return fmt.Errorf("project: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("project: commit: %w", err)
	}
	return nil
}

// catchUp projects what a daemon that stopped without projecting (killed,
// say) left in the log's tail, reading the tasks from the recorded results.
func (d *DB) catchUp(ctx context.Context) error {
	// Only the rows past the projection's rowid mark can be unprojected,
	// so a clean start reads one row here, however large the database.
	var lagging []struct {
		ID        string `db:"id"`
		Projected int64  `db:"projected_seq"`
	}
	if err := d.w.SelectContext(ctx, &lagging, `SELECT id, projected_seq FROM sessions WHERE id IN (
		SELECT DISTINCT session_id FROM tool_calls WHERE rowid > (SELECT through_rowid FROM projection_state))`); err != nil {
		return fmt.Errorf("find unprojected sessions: %w", err)
	}
	if len(lagging) == 0 {
		return nil
	}
	tasks := map[string]map[int]projected{}
	lastSeq := map[string]int64{}
	for _, s := range lagging {
		var rows []struct {
			Seq       int64  `db:"seq"`
			Name      string `db:"name"`
			IsError   bool   `db:"is_error"`
			Result    string `db:"result"`
			CreatedAt string `db:"created_at"`
		}
		if err := d.w.SelectContext(ctx, &rows, `SELECT seq, name, is_error, result, created_at FROM tool_calls
			WHERE session_id = ? AND seq > ? ORDER BY seq`, s.ID, s.Projected); err != nil {
			return fmt.Errorf("read the unprojected calls of %s: %w", s.ID, err)
		}
		m := map[int]projected{}
		for _, r := range rows {
			lastSeq[s.ID] = r.Seq
			if r.IsError || (r.Name != "TaskCreate" && r.Name != "TaskUpdate") {
				continue
			}
			if t, ok := resultTask([]byte(r.Result)); ok {
				m[t.Taskid] = projected{task: t, at: r.CreatedAt}
			}
		}
		tasks[s.ID] = m
	}
	if err := d.projectTx(ctx, tasks, lastSeq); err != nil {
		return err
	}
	d.log.Info("projected the calls a previous run left unprojected", slog.Int("sessions", len(lagging)))
	return nil
}

// resultTask reads the task a write's recorded result holds.
func resultTask(result []byte) (store.Task, bool) {
	var r struct {
		StructuredContent struct {
			Task *store.Task `json:"task"`
		} `json:"structuredContent"`
	}
	dec := json.NewDecoder(bytes.NewReader(result))
	if dec.Decode(&r) != nil || r.StructuredContent.Task == nil {
		return store.Task{}, false
	}
	return *r.StructuredContent.Task, true
}

// Project writes every pending task change to task_projection now (tests,
// and before a clean stop). It waits for the writer.
func (d *DB) Project(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case d.projectNow <- done:
	case <-d.closed:
		return fmt.Errorf("project: %w", errClosed)
	case <-ctx.Done():
		return ctx.Err()
	}
	<-done
	return nil
}
