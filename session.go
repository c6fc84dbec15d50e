package tasksessiond

import (
	"encoding/json"
	"fmt"
	"time"
)

// A session's status: active, or compacted (sealed: its successor takes
// the writes).
const (
	SessionActive    = "active"
	SessionCompacted = "compacted"
)

// Session is a session's record. Counts and HeadID are not stored: a
// reader fills them in (sessions/get and sessions/list show them).
type Session struct {
	ID          string          `json:"id"`
	Title       string          `json:"title"`
	Metadata    json.RawMessage `json:"metadata"`
	Status      string          `json:"status"` // SessionActive or SessionCompacted
	ParentID    string          `json:"parentId,omitempty"`
	SuccessorID string          `json:"successorId,omitempty"`
	// HeadID is the newest session of the lineage, the one that takes
	// writes; sessions/get sets it (to ID unless the session was compacted).
	HeadID    string    `json:"headId,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	Counts    Counts    `json:"counts"`
	// Refused says why the daemon refuses to serve the session (its log
	// fails its check); sessions/list sets it, with zero counts.
	Refused string `json:"refused,omitempty"`
	// Snapshot is the list copied in when this session was made by
	// compaction; nil for a session that started empty.
	Snapshot *Snapshot `json:"-"`
	// Log is the head recorded beside the log, which a load checks the
	// log's chain against; nil from a storage that keeps no chain.
	Log *LogHead `json:"-"`
}

// Message is a message to place at the start of a session's history.
type Message struct {
	Role    string `json:"role"`
	Kind    string `json:"kind"` // task_snapshot or summary
	Content string `json:"content"`
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
	// Checksum chains the row to the one before it (see Summer.Sum);
	// the storage sets it when it logs the row, 0 where it keeps none.
	Checksum int64
	// Change is what a successful write changed, as its row's columns
	// hold it; nil for reads and errors.
	Change *Change
}

// Change is what a write changes: decoded from a TaskCreate's or a
// TaskUpdate's arguments, applied by the list (store.Update), kept in the
// log's change columns and replayed from them. Taskid is the task (0 in
// a TaskCreate's arguments: the list assigns it); Status its status (""
// in arguments: unchanged; in the log, the status after the call);
// Subject and Description are nil when left as they were.
type Change struct {
	Taskid      int
	Status      Status
	Subject     *string
	Description *string
}

// Append is one call to log, with the task it changed as it is after the
// call (nil for reads and errors), and which of the task's text fields
// the call set: the log's change columns hold the status and only what
// the call set, so that a status change of a task with a long
// description does not store the description again.
type Append struct {
	Call                       Call
	Task                       *Task
	SetSubject, SetDescription bool
	// Prev is the checksum of the session's row before Call, when the
	// caller knows it (the manager does, from the load it checked): 0 has
	// the storage read the session's head instead.
	Prev int64
}

// Compaction is what sessions/compact writes (built by package compact):
// the successor, its tasks, its messages and its forced first call, and
// the seal on the old session.
type Compaction struct {
	Old      string
	New      *Session
	Tasks    []Task
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

// Columns are the log row's change columns (taskid, status, subject,
// description) as SQL arguments, nil for NULL: all four NULL for a read
// or an error. Both storage adapters write them.
func (a *Append) Columns() [4]any {
	var cols [4]any
	if ch := a.Change(); ch != nil {
		cols[0], cols[1] = int64(ch.Taskid), string(ch.Status)
		if ch.Subject != nil {
			cols[2] = *ch.Subject
		}
		if ch.Description != nil {
			cols[3] = *ch.Description
		}
	}
	return cols
}

// Empty reports whether c changes none of a task's fields.
func (c Change) Empty() bool { return c.Status == "" && c.Subject == nil && c.Description == nil }

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

// ReplayReport counts the outcomes of a replay. A divergence is a create whose
// replayed task differs from the one recorded, or a write that fails now
// although it was not recorded as an error (it is then also counted as
// skipped invalid).
type ReplayReport struct {
	Applied        int          `json:"applied"`
	SkippedErrors  int          `json:"skippedErrors"`
	SkippedInvalid int          `json:"skippedInvalid"`
	Divergent      int          `json:"divergent"`
	Divergences    []Divergence `json:"-"`
}

// Divergence says where a replay did not reproduce the log.
type Divergence struct {
	Seq int64
	Msg string
}

func (d Divergence) String() string { return fmt.Sprintf("seq %d: %s", d.Seq, d.Msg) }
