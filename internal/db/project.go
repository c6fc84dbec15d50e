package db

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tasksessiond/tasksessiond/internal/store"
)

// The tasks projection is kept off the hot path. A commit writes the log
// rows only; the writer remembers each committed task change, and when
// the writes pause (see projectPause) writes the latest state of each
// changed task to task_projection in one transaction, with
// each session's projected_seq. The tasks view lays the log's rows past
// projected_seq over the projection, so it is exact at every moment; the
// projection only keeps that tail short. Many changes to one session then
// share a page, and a task changed twice is written once.

// A compaction writes no projection rows for the successor: its first
// tasks are the sealed parent's projection, which the projector copies to
// it (before any change to them), and which the view reads until then.

// The projector runs when the writes pause for a projectPause-th of
// Options.ProjectInterval (10 ms by default): under load it would take the
// writer from the commits, so then it waits until the interval has passed,
// one session has sessionBatch changes waiting (the tasks view reads a
// session's tail once per projected task, so a tail stays short), or
// projectBatch changes wait in all; a task changed many times meanwhile is
// written once. The bound is per session so that many sessions writing at
// once do not make it run more often: each run stops the commits.
const (
	sessionBatch = 1024
	projectBatch = 16 << 10
	projectPause = 100
)

// projected is a task change waiting for the projector.
type projected struct {
	task  store.Task
	at    string // the time of its latest change
	first string // of its first change since the last projection: its created_at if new to the projection
}

// pendingProjection is owned by the writer goroutine.
type pendingProjection struct {
	tasks   map[string]map[int]projected // session → taskid → latest
	lastSeq map[string]int64             // session → seq of its last committed row
	changes map[string]int               // session → task changes noted
	n       int                          // task changes noted in all
	most    int                          // the most of any one session
	// snapshots is set when a compaction may have left a snapshot to
	// project.
	snapshots bool
	last      time.Time
}

func newPendingProjection() pendingProjection {
	return pendingProjection{tasks: map[string]map[int]projected{}, lastSeq: map[string]int64{}, changes: map[string]int{}, last: time.Now()}
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
			first := ts
			if prev, ok := m[a.Task.Taskid]; ok {
				first = prev.first
			}
			m[a.Task.Taskid] = projected{task: *a.Task, at: ts, first: first}
			p.n++
			p.changes[c.SessionID]++
			p.most = max(p.most, p.changes[c.SessionID])
		}
	}
}

// due reports whether the projector should run now.
func (p *pendingProjection) due(every time.Duration) bool {
	return p.waiting() && (p.most >= sessionBatch || p.n >= projectBatch || time.Since(p.last) >= every)
}

// waiting reports whether anything waits for the projector.
func (p *pendingProjection) waiting() bool { return len(p.lastSeq) > 0 || p.snapshots }

// pause is how long the writes must pause for the projector to run (0:
// nothing waits). A snapshot alone waits ten times longer: copying a long
// list right after its compaction would take a core from the reply that
// carries it, which the host is waiting for.
func (p *pendingProjection) pause(every time.Duration) time.Duration {
	switch {
	case len(p.lastSeq) > 0:
		return every / projectPause
	case p.snapshots:
		return 10 * every / projectPause
	}
	return 0
}

// project writes the pending changes to task_projection. On failure they
// stay pending (the tasks view is exact regardless) and are tried again.
func (d *DB) project(ctx context.Context) {
	p := &d.wr.proj
	p.last = time.Now()
	failed := func(err error) {
		if !d.wr.projectFailing {
			d.log.Warn("projecting tasks failed; the tasks view stays exact, the projection will catch up", slog.Any("err", err))
			d.wr.projectFailing = true
		}
	}
	if !d.wr.tailKnown {
		// The start-up's catch-up failed: the rows a previous run left
		// past the mark are in no one's memory, and moving the mark past
		// them would leave them unprojected. It is tried again first.
		if err := d.catchUp(ctx); err != nil {
			failed(err)
			return
		}
		d.wr.tailKnown = true
	}
	if !p.waiting() {
		return
	}
	if err := d.projectTx(ctx, p.tasks, p.lastSeq); err != nil {
		failed(err)
		return
	}
	if d.wr.projectFailing {
		d.log.Info("projecting tasks works again")
		d.wr.projectFailing = false
	}
	*p = newPendingProjection()
}

func (d *DB) projectTx(ctx context.Context, tasks map[string]map[int]projected, lastSeq map[string]int64) error {
	tx, err := d.w.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("project: begin: %w", err)
	}
	defer tx.Rollback()
	// Snapshots first, so that a change to a task a snapshot holds finds
	// its row (and keeps its created_at).
	if err := projectSnapshots(ctx, tx); err != nil {
		return err
	}
	upsert := tx.StmtContext(ctx, d.stmts.upsertTask)
	for sid, m := range tasks {
		for _, t := range m {
			if _, err := upsert.ExecContext(ctx,
				sid, t.task.Taskid, string(t.task.Status), t.task.Subject, t.task.Description, t.first, t.at); err != nil {
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
	if err := markProjected(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("project: commit: %w", err)
	}
	return nil
}

// markProjected records that every log row so far is in the projection,
// and files the rows past the previous mark into log_index, sorted, so
// that each session's index page is written once for all of them. A row
// whose session and seq are indexed already (only a program other than the
// daemon can log one twice) stays out of the index, for fsck to report;
// the first logged is kept.
func markProjected(ctx context.Context, tx *sqlx.Tx) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO log_index (session_id, seq, call)
		SELECT session_id, seq, rowid FROM tool_calls WHERE rowid > (SELECT through_rowid FROM projection_state)
		ORDER BY session_id, seq, rowid
		ON CONFLICT DO NOTHING`); err != nil {
		return fmt.Errorf("index the log: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE projection_state SET through_rowid = coalesce((SELECT max(rowid) FROM tool_calls), 0)`); err != nil {
		return fmt.Errorf("mark the projection: %w", err)
	}
	return nil
}

// projectSnapshots gives every successor not projected yet its first
// tasks: its parent's projection rows, which Compact brought up to date.
// With none waiting, it reads one empty index.
func projectSnapshots(ctx context.Context, tx *sqlx.Tx) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO task_projection (session_id, taskid, status, subject, description, created_at, updated_at)
		SELECT b.session_id, pp.taskid, pp.status, pp.subject, pp.description, pp.created_at, s.created_at
		FROM snapshots b JOIN sessions s ON s.id = b.session_id JOIN task_projection pp ON pp.session_id = s.parent_id
		WHERE b.projected = 0
		ON CONFLICT DO NOTHING`); err != nil {
		return fmt.Errorf("project snapshots: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE snapshots SET projected = 1 WHERE projected = 0`); err != nil {
		return fmt.Errorf("project snapshots: %w", err)
	}
	return nil
}

// projectSessionTail brings one session's projection up to date from its
// log rows past projected_seq, in seq order, so that each task ends at its
// last change and a task new to the projection is stamped with its first.
// A row holds the status and only the text fields its call set, so the
// changes are folded per task first.
func projectSessionTail(ctx context.Context, tx *sqlx.Tx, sessionID string) error {
	var rows []struct {
		Taskid      int            `db:"taskid"`
		Status      string         `db:"status"`
		Subject     sql.NullString `db:"subject"`
		Description sql.NullString `db:"description"`
		At          string         `db:"created_at"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT c.taskid, c.status, c.subject, c.description, c.created_at
		FROM tool_calls c WHERE c.rowid > (SELECT through_rowid FROM projection_state)
		  AND c.session_id = ?1 AND c.taskid IS NOT NULL
		  AND c.seq > (SELECT projected_seq FROM sessions WHERE id = ?1)
		ORDER BY c.seq`, sessionID); err != nil {
		return fmt.Errorf("project the log of %s: %w", sessionID, err)
	}
	type change struct {
		status               string
		subject, description sql.NullString
		first, last          string
	}
	changes := map[int]*change{}
	var order []int
	for _, r := range rows {
		c := changes[r.Taskid]
		if c == nil {
			c = &change{first: r.At}
			changes[r.Taskid] = c
			order = append(order, r.Taskid)
		}
		c.status, c.last = r.Status, r.At
		if r.Subject.Valid {
			c.subject = r.Subject
		}
		if r.Description.Valid {
			c.description = r.Description
		}
	}
	for _, id := range order {
		c := changes[id]
		// A task created in the tail has both text fields; one created
		// before it is in the projection already.
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_projection (session_id, taskid, status, subject, description, created_at, updated_at)
			SELECT ?1, ?2, ?3, coalesce(?4, p.subject), coalesce(?5, p.description), coalesce(p.created_at, ?6), ?7
			FROM (SELECT 1) LEFT JOIN task_projection p ON p.session_id = ?1 AND p.taskid = ?2
			WHERE true
			ON CONFLICT (session_id, taskid) DO UPDATE SET status = excluded.status, subject = excluded.subject,
				description = excluded.description, updated_at = excluded.updated_at`,
			sessionID, id, c.status, c.subject, c.description, c.first, c.last); err != nil {
			return fmt.Errorf("project task %d of %s: %w", id, sessionID, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET projected_seq = coalesce((SELECT max(seq) FROM session_log WHERE session_id = ?1), 0)
		WHERE id = ?1`, sessionID); err != nil {
		return fmt.Errorf("project the log of %s: %w", sessionID, err)
	}
	return nil
}

// catchUp projects what a daemon that stopped without projecting (killed,
// say) left: the snapshots, and the log's tail of each session it wrote
// past the projection's rowid mark, as compaction projects a sealed one.
func (d *DB) catchUp(ctx context.Context) error {
	if err := d.w.GetContext(ctx, &d.wr.proj.snapshots, `SELECT EXISTS (SELECT 1 FROM snapshots WHERE projected = 0)`); err != nil {
		return fmt.Errorf("find unprojected snapshots: %w", err)
	}
	// Only the rows past the mark can be unprojected, so a clean start
	// reads one row here, however large the database. A sealed session's
	// projection is final: its compaction brought it up to date, and its
	// successor starts from it. A row logged after the seal (the daemon
	// refuses them: a hand edit, another program) stays out of it, for
	// fsck to report.
	var lagging []string
	if err := d.w.SelectContext(ctx, &lagging, `SELECT DISTINCT c.session_id FROM tool_calls c JOIN sessions s ON s.id = c.session_id
		WHERE c.rowid > (SELECT through_rowid FROM projection_state) AND s.status = 'active'`); err != nil {
		return fmt.Errorf("find unprojected sessions: %w", err)
	}
	if len(lagging) == 0 {
		return nil
	}
	tx, err := d.w.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("catch up: begin: %w", err)
	}
	defer tx.Rollback()
	if err := projectSnapshots(ctx, tx); err != nil {
		return err
	}
	for _, id := range lagging {
		if err := projectSessionTail(ctx, tx, id); err != nil {
			return err
		}
	}
	if err := markProjected(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("catch up: commit: %w", err)
	}
	d.wr.proj.snapshots = false
	d.log.Info("projected the calls a previous run left unprojected", slog.Int("sessions", len(lagging)))
	return nil
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
