// Package store is a session's task list: the tasks in taskid order, the
// open ones indexed, the counts kept, and the next taskid.
//
// It is pure and deterministic: no I/O, no clocks, no JSON-RPC, no SQL.
// The same sequence of calls on two stores always yields the same tasks and
// the same taskids, which is what makes resume by replay work.
package store

import (
	"fmt"
	"iter"
	"slices"

	"github.com/tasksessiond/tasksessiond"
)

// Store holds a session's tasks in taskid order. It is not safe for
// concurrent use; the session that owns it serialises access.
type Store struct {
	tasks  []tasksessiond.Task
	open   []int // indexes into tasks of the open tasks, ascending
	next   int
	counts tasksessiond.Counts
}

// New returns an empty store whose first task will be #1.
func New() *Store { return &Store{next: 1} }

// Restore returns a store holding snap. It rejects a snapshot that could not
// have come from a store: ids not strictly increasing, an id at or above
// nextTaskid, or an invalid status.
func Restore(snap tasksessiond.Snapshot) (*Store, error) {
	s := &Store{next: snap.NextTaskid, tasks: make([]tasksessiond.Task, 0, len(snap.Tasks))}
	if s.next < 1 {
		return nil, fmt.Errorf("restore: nextTaskid %d is below 1", s.next)
	}
	prev := 0
	for _, t := range snap.Tasks {
		if t.Taskid <= prev || t.Taskid >= s.next {
			return nil, fmt.Errorf("restore: taskid %d out of order (previous %d, next %d)", t.Taskid, prev, s.next)
		}
		if !t.Status.Valid() {
			return nil, fmt.Errorf("restore: task %d has invalid status %q", t.Taskid, t.Status)
		}
		prev = t.Taskid
		if t.Status.Open() {
			s.open = append(s.open, len(s.tasks))
		}
		s.tasks = append(s.tasks, t)
		s.count(t.Status, 1)
	}
	return s, nil
}

// Create appends a pending task and returns it with its assigned taskid.
func (s *Store) Create(subject, description string) tasksessiond.Task {
	t := tasksessiond.Task{Taskid: s.next, Status: tasksessiond.Pending, Subject: subject, Description: description}
	s.next++
	s.open = append(s.open, len(s.tasks))
	s.tasks = append(s.tasks, t)
	s.count(tasksessiond.Pending, 1)
	return t
}

// Update applies ch to task ch.Taskid and returns the task as it now is.
func (s *Store) Update(ch tasksessiond.Change) (tasksessiond.Task, error) {
	i, ok := s.index(ch.Taskid)
	if !ok {
		return tasksessiond.Task{}, tasksessiond.ErrTaskNotFound
	}
	if ch.Status != "" && !ch.Status.Valid() {
		return tasksessiond.Task{}, fmt.Errorf("invalid status %q", ch.Status)
	}
	t := &s.tasks[i]
	if ch.Status != "" {
		s.count(t.Status, -1)
		wasOpen := t.Status.Open()
		t.Status = ch.Status
		s.count(t.Status, 1)
		if j, found := slices.BinarySearch(s.open, i); wasOpen && !t.Status.Open() && found {
			s.open = slices.Delete(s.open, j, j+1)
		} else if !wasOpen && t.Status.Open() && !found {
			s.open = slices.Insert(s.open, j, i)
		}
	}
	if ch.Subject != nil {
		t.Subject = *ch.Subject
	}
	if ch.Description != nil {
		t.Description = *ch.Description
	}
	return *t, nil
}

// Get returns task id.
func (s *Store) Get(id int) (tasksessiond.Task, error) {
	i, ok := s.index(id)
	if !ok {
		return tasksessiond.Task{}, tasksessiond.ErrTaskNotFound
	}
	return s.tasks[i], nil
}

// List returns a copy of every task in taskid order, completed and deleted included.
func (s *Store) List() []tasksessiond.Task { return slices.Clone(s.tasks) }

// All iterates over the tasks in taskid order without copying the list.
// The store must not change during the iteration.
func (s *Store) All() iter.Seq[tasksessiond.Task] {
	return func(yield func(tasksessiond.Task) bool) {
		for _, t := range s.tasks {
			if !yield(t) {
				return
			}
		}
	}
}

// Open iterates over the pending and in-progress tasks in taskid order,
// in time proportional to their number: a session keeps a few open tasks
// among thousands it has closed, and every change's result shows them.
// The store must not change during the iteration.
func (s *Store) Open() iter.Seq[tasksessiond.Task] {
	return func(yield func(tasksessiond.Task) bool) {
		for _, i := range s.open {
			if !yield(s.tasks[i]) {
				return
			}
		}
	}
}

// Len is the number of tasks held.
func (s *Store) Len() int { return len(s.tasks) }

// NextTaskid is the id the next Create will assign.
func (s *Store) NextTaskid() int { return s.next }

// Counts returns the number of tasks in each status.
func (s *Store) Counts() tasksessiond.Counts { return s.counts }

// Snapshot returns a copy of the whole store.
func (s *Store) Snapshot() tasksessiond.Snapshot {
	return tasksessiond.Snapshot{Tasks: s.List(), NextTaskid: s.next}
}

func (s *Store) index(id int) (int, bool) {
	// Ids are dense in practice (nothing is ever removed), so try the direct
	// slot before searching.
	if i := id - 1; i >= 0 && i < len(s.tasks) && s.tasks[i].Taskid == id {
		return i, true
	}
	return slices.BinarySearchFunc(s.tasks, id, func(t tasksessiond.Task, id int) int { return t.Taskid - id })
}

func (s *Store) count(st tasksessiond.Status, d int) { s.counts.Add(st, d) }
