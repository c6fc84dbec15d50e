package server

import (
	"github.com/tasksessiond/tasksessiond/internal/record"
	"github.com/tasksessiond/tasksessiond/internal/replay"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/wire"
)

// The session manager speaks in the domain's types; the wire is declared
// once, in package wire, and these put the one into the other.

func wireSession(i session.Info) wire.Session {
	return wire.Session{ID: i.ID, Title: i.Title, Metadata: i.Metadata, Status: i.Status, ParentID: i.ParentID,
		SuccessorID: i.SuccessorID, HeadID: i.HeadID, CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt, Counts: wire.Counts(i.Counts)}
}

func wireTask(t store.Task) wire.Task {
	return wire.Task{Taskid: t.Taskid, Status: string(t.Status), Subject: t.Subject, Description: t.Description}
}

func wireTasks(ts []store.Task) []wire.Task {
	out := make([]wire.Task, len(ts))
	for i, t := range ts {
		out[i] = wireTask(t)
	}
	return out
}

func wireMessages(ms []record.Message) []wire.Message {
	out := make([]wire.Message, len(ms))
	for i, m := range ms {
		out[i] = wire.Message(m)
	}
	return out
}

func wireReport(r replay.Report) wire.ReplayReport {
	return wire.ReplayReport{Applied: r.Applied, SkippedErrors: r.SkippedErrors, SkippedInvalid: r.SkippedInvalid, Divergent: r.Divergent}
}

func wireResumed(r session.Resumed) wire.Resumed {
	out := wire.Resumed{Session: wireSession(r.Session), Tasks: wireTasks(r.Tasks), NextTaskid: r.NextTaskid,
		Messages: wireMessages(r.Messages), Replay: wireReport(r.Replay)}
	if r.ForcedCall != nil {
		fc := wire.ForcedCall(*r.ForcedCall)
		out.ForcedCall = &fc
	}
	return out
}

func wireSnapshot(s session.Snapshot) wire.Snapshot {
	return wire.Snapshot{Tasks: wireTasks(s.Tasks), NextTaskid: s.NextTaskid, Text: s.Text}
}

func wireCompacted(c session.Compacted) wire.Compacted {
	return wire.Compacted{Session: wireSession(c.Session), Messages: wireMessages(c.Messages), ForcedCall: wire.ForcedCall(c.ForcedCall)}
}

func wireEvent(e session.Event) wire.Event {
	out := wire.Event{SessionID: e.SessionID, Seq: e.Seq, Op: e.Op, SuccessorID: e.SuccessorID}
	if e.Task != nil {
		t := wireTask(*e.Task)
		out.Task = &t
	}
	return out
}
