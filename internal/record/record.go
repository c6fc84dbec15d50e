// Package record holds what is kept of a session beside its task list: the
// session itself, the calls of its log, the messages injected at its start,
// and what a compaction writes. Like package store it is plain data, with
// no I/O: the SQLite adapter (package db) turns rows into these and back.
package record

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/wire"
)

// Session statuses.
const (
	StatusActive    = "active"
	StatusCompacted = "compacted"
)

// Session is a session's record.
type Session struct {
	ID          string
	Title       string
	Metadata    json.RawMessage
	Status      string
	ParentID    string
	SuccessorID string
	// Snapshot is the store copied in when this session was made by
	// compaction; nil for a session that started empty.
	Snapshot  *store.Snapshot
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Call is one entry of a session's log: a tool call and its result.
type Call struct {
	SessionID string
	Seq       int64
	CallID    string
	Name      string
	Arguments json.RawMessage
	IsError   bool
	Result    json.RawMessage
	Forced    bool // the TaskList fired for the model at compaction
	CreatedAt time.Time
	// Change is what a successful write changed, as its row's columns
	// hold it; nil for reads and errors.
	Change *Change
}

// Change is a write's change as logged: the task's id and status after
// it, and the subject and description it set (nil for those it left).
type Change struct {
	Taskid      int
	Status      store.Status
	Subject     *string
	Description *string
}

// Append is one call to log, with the task it changed as it is after the
// call (nil for reads and errors), and which of the task's text fields
// the call set: the log's change columns
// hold the status and only what the call set, so that a status change of
// a task with a long description does not store the description again.
type Append struct {
	Call                       Call
	Task                       *store.Task
	SetSubject, SetDescription bool
}

// Message is a message injected at the start of a session's history.
type Message = wire.Message

// Compaction is what sessions/compact writes (built by package compact):
// the successor, its tasks, its messages and its forced first call, and
// the seal on the old session.
type Compaction struct {
	Old      string
	New      *Session
	Tasks    []store.Task
	Messages []Message
	Forced   *Append
}

// Change is what the log's change columns hold for a: nil for a read or an
// error, else the task's id and status and the text fields the call set.
func (a *Append) Change() *Change {
	t := a.Task
	if t == nil {
		return nil
	}
	ch := &Change{Taskid: t.Taskid, Status: t.Status}
	if a.SetSubject {
		ch.Subject = &t.Subject
	}
	if a.SetDescription {
		ch.Description = &t.Description
	}
	return ch
}

// Equal reports whether c and o record the same change (both nil: none).
func (c *Change) Equal(o *Change) bool {
	if c == nil || o == nil {
		return c == o
	}
	same := func(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
	return c.Taskid == o.Taskid && c.Status == o.Status && same(c.Subject, o.Subject) && same(c.Description, o.Description)
}

func (c *Change) String() string {
	s := fmt.Sprintf("task %d %s", c.Taskid, c.Status)
	if c.Subject != nil {
		s += fmt.Sprintf(" subject %q", *c.Subject)
	}
	if c.Description != nil {
		s += fmt.Sprintf(" description %q", *c.Description)
	}
	return s
}
