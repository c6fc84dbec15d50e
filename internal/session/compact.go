package session

import (
	"context"
	"errors"
	"log/slog"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/compact"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/wire"
)

// Snapshot returns a session's whole store and the text compaction would
// inject. It changes nothing and works on a sealed session too.
func (m *Manager) Snapshot(ctx context.Context, id string) (wire.Snapshot, error) {
	s, _, release, err := m.acquireRead(ctx, id, false)
	if err != nil {
		return wire.Snapshot{}, err
	}
	defer release()
	return wire.Snapshot{Tasks: taskList(s.st), NextTaskid: s.st.NextTaskid(), Text: compact.Text(s.st)}, nil
}

const maxSummaryLen = 1 << 20

// Compact seals a session and makes its successor holding every task
// (completed and deleted too) and the taskid counter, in one transaction.
// It holds the session's lock throughout, so a racing write either lands
// before (and is in the snapshot) or finds the session sealed.
func (m *Manager) Compact(ctx context.Context, p wire.Compact) (wire.Compacted, error) {
	if p.NewSessionID == "" {
		p.NewSessionID = newID()
	}
	if err := validID(p.NewSessionID); err != nil {
		return wire.Compacted{}, err
	}
	if len(p.Summary) > maxSummaryLen {
		return wire.Compacted{}, tasksessiond.Errorf(tasksessiond.KindInvalid, "summary is %d bytes, the limit is %d", len(p.Summary), maxSummaryLen)
	}
	s, err := m.acquire(ctx, p.SessionID)
	if err != nil {
		return wire.Compacted{}, err
	}
	defer s.release()
	if s.rec.Status == tasksessiond.SessionCompacted {
		return wire.Compacted{}, m.sealed(s, "compact")
	}
	plan, err := compact.Build(s.rec, s.st, p.NewSessionID, p.Summary)
	if err != nil {
		return wire.Compacted{}, &tasksessiond.Error{Kind: tasksessiond.KindInternal, Message: "building the successor", Err: err}
	}
	if err := m.db.Compact(context.WithoutCancel(ctx), plan); err != nil {
		switch {
		case errors.Is(err, tasksessiond.ErrExists):
			return wire.Compacted{}, tasksessiond.Errorf(tasksessiond.KindExists, "session %q already exists: give another newSessionId, or none to have one generated", p.NewSessionID)
		case errors.Is(err, tasksessiond.ErrSealed):
			// The row says it is sealed though memory did not: memory is
			// stale, so drop it and let the next access replay.
			m.drop(s)
			return wire.Compacted{}, tasksessiond.Errorf(tasksessiond.KindSealed, "session %s was already compacted", s.id)
		}
		// Dropped, for the next use to read what the log says: on
		// PostgreSQL a commit cut off may have landed.
		m.drop(s)
		return wire.Compacted{}, unavailable("compacting "+s.id, err)
	}
	s.rec.Status, s.rec.SuccessorID = tasksessiond.SessionCompacted, plan.New.ID
	m.created()
	m.notify(wire.Event{SessionID: s.id, Op: OpCompacted, SuccessorID: plan.New.ID})

	// The compaction has committed: a successor that does not restore here
	// is not an error of this call, but it is logged, and the successor is
	// loaded from the database on first use (where a bad snapshot fails).
	if succ, err := store.Restore(*plan.New.Snapshot); err != nil {
		m.log.Error("compacted, but the successor's snapshot does not restore in memory; it will be loaded from the database",
			slog.String(keySession, s.id), slog.String("successor", plan.New.ID), slog.Any("err", err))
	} else {
		m.adopt(&session{id: plan.New.ID, clock: m.now, loaded: true, rec: *plan.New, st: succ, nextSeq: 2, lastSum: plan.Forced.Call.Checksum,
			callIDs: map[string]int64{plan.Forced.Call.CallID: plan.Forced.Call.Seq}, forced: &plan.Forced.Call,
			ancestors: append([]string{s.id}, s.ancestors...)})
	}
	m.log.Info("session compacted", slog.String(keySession, s.id), slog.String("successor", plan.New.ID), slog.Int("tasks", len(plan.Tasks)))

	return wire.Compacted{Session: info(*plan.New, s.st.Counts()), Messages: plan.Messages, ForcedCall: forcedCall(&plan.Forced.Call)}, nil
}

// adopt puts a freshly built session in memory, unless someone already
// loaded it.
func (m *Manager) adopt(s *session) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[s.id]; !ok {
		m.sessions[s.id] = s
	}
}

// sealed is the error for a change sent to a compacted session.
func (m *Manager) sealed(s *session, what string) *tasksessiond.Error {
	return &tasksessiond.Error{Kind: tasksessiond.KindSealed, SuccessorID: s.rec.SuccessorID,
		Message: "session " + s.id + " was compacted into " + s.rec.SuccessorID + " and no longer takes changes: " + what + " in the successor session"}
}

func forcedCall(c *tasksessiond.Call) wire.ForcedCall {
	return wire.ForcedCall{CallID: c.CallID, Name: c.Name, Arguments: map[string]any{}, Result: c.Result}
}

// taskList is st's tasks ([] when none: the wire never carries null).
func taskList(st *store.Store) []tasksessiond.Task {
	tasks := st.List()
	if tasks == nil {
		tasks = []tasksessiond.Task{}
	}
	return tasks
}
