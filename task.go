// Package tasksessiond is the domain of the daemon: a task, its status,
// a session and its log of calls, what a write changes, the errors a
// caller branches on, and the Storage the sessions are kept in. It
// imports nothing of the program's own; the SQLite and PostgreSQL
// adapters (internal/db, internal/pgdb), the list (internal/store), the
// session manager and the wire all speak these types.
package tasksessiond

import (
	"fmt"
	"slices"
	"strings"
)

// Status is where a task is in its life. The normal route is
// pending -> inprogress -> completed; deleted withdraws a task without
// removing it.
type Status string

const (
	Pending    Status = "pending"
	InProgress Status = "inprogress"
	Completed  Status = "completed"
	Deleted    Status = "deleted"
)

// Statuses lists the four statuses in their canonical order.
var Statuses = []Status{Pending, InProgress, Completed, Deleted}

// ParseStatus accepts the canonical names, case-insensitively, plus the
// spellings models commonly use for "inprogress".
func ParseStatus(s string) (Status, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "pending":
		return Pending, nil
	case "inprogress", "in_progress", "in-progress":
		return InProgress, nil
	case "completed":
		return Completed, nil
	case "deleted":
		return Deleted, nil
	}
	return "", fmt.Errorf("status must be one of pending, inprogress, completed, deleted; got %q", s)
}

// Valid reports whether s is one of the four canonical statuses.
func (s Status) Valid() bool { return slices.Contains(Statuses, s) }

// Open reports whether the task still needs work.
func (s Status) Open() bool { return s == Pending || s == InProgress }

// Task is one entry of the list. It has exactly the four fields of the spec.
type Task struct {
	Taskid      int    `json:"taskid"`
	Status      Status `json:"status"`
	Subject     string `json:"subject"`
	Description string `json:"description"`
}

// Counts are the number of tasks in each status.
type Counts struct {
	Total      int `json:"total"`
	Pending    int `json:"pending"`
	InProgress int `json:"inprogress"`
	Completed  int `json:"completed"`
	Deleted    int `json:"deleted"`
}

// CountOf counts tasks by status.
func CountOf(tasks []Task) Counts {
	var c Counts
	for _, t := range tasks {
		c.Add(t.Status, 1)
	}
	return c
}

// Add counts d more tasks (d < 0: fewer) in status st.
func (c *Counts) Add(st Status, d int) {
	c.Total += d
	switch st {
	case Pending:
		c.Pending += d
	case InProgress:
		c.InProgress += d
	case Completed:
		c.Completed += d
	case Deleted:
		c.Deleted += d
	}
}

// Snapshot is a whole list: every task and the next taskid to assign.
// Keeping nextTaskid with the tasks is what lets a compacted session go on
// numbering without reusing an id.
type Snapshot struct {
	Tasks      []Task `json:"tasks"`
	NextTaskid int    `json:"nextTaskid"`
}
