package store_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/store"
)

func ptr[T any](v T) *T { return &v }

func TestCreate(t *testing.T) {
	// Ensures ids are assigned by the store, from 1, monotonically, and new tasks are pending.
	s := store.New()
	a := s.Create("first", "")
	b := s.Create("second", "details")
	assert.Equal(t, tasksessiond.Task{Taskid: 1, Status: tasksessiond.Pending, Subject: "first"}, a)
	assert.Equal(t, tasksessiond.Task{Taskid: 2, Status: tasksessiond.Pending, Subject: "second", Description: "details"}, b)
	assert.Equal(t, 3, s.NextTaskid())
	assert.Equal(t, []tasksessiond.Task{a, b}, s.List())
}

func TestUpdate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		patch tasksessiond.Change
		want  tasksessiond.Task
	}{
		{"Status", tasksessiond.Change{Status: tasksessiond.InProgress}, tasksessiond.Task{Taskid: 1, Status: tasksessiond.InProgress, Subject: "s", Description: "d"}},
		{"Subject", tasksessiond.Change{Subject: ptr("new")}, tasksessiond.Task{Taskid: 1, Status: tasksessiond.Pending, Subject: "new", Description: "d"}},
		{"Description", tasksessiond.Change{Description: ptr("")}, tasksessiond.Task{Taskid: 1, Status: tasksessiond.Pending, Subject: "s"}},
		{"DeleteKeepsTask", tasksessiond.Change{Status: tasksessiond.Deleted}, tasksessiond.Task{Taskid: 1, Status: tasksessiond.Deleted, Subject: "s", Description: "d"}},
		{"All", tasksessiond.Change{Status: tasksessiond.Completed, Subject: ptr("x"), Description: ptr("y")}, tasksessiond.Task{Taskid: 1, Status: tasksessiond.Completed, Subject: "x", Description: "y"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := store.New()
			s.Create("s", "d")
			tc.patch.Taskid = 1
			got, err := s.Update(tc.patch)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, []tasksessiond.Task{tc.want}, s.List(), "the task stays in the list")
		})
	}
	t.Run("ErrNotFound", func(t *testing.T) {
		s := store.New()
		s.Create("s", "")
		_, err := s.Update(tasksessiond.Change{Taskid: 2, Status: tasksessiond.Completed})
		assert.ErrorIs(t, err, tasksessiond.ErrTaskNotFound)
		_, err = s.Update(tasksessiond.Change{Taskid: 0, Status: tasksessiond.Completed})
		assert.ErrorIs(t, err, tasksessiond.ErrTaskNotFound)
	})
	t.Run("ErrInvalidStatus", func(t *testing.T) {
		s := store.New()
		s.Create("s", "")
		_, err := s.Update(tasksessiond.Change{Taskid: 1, Status: tasksessiond.Status("done")})
		assert.Error(t, err)
		assert.Equal(t, tasksessiond.Pending, s.List()[0].Status, "a rejected update changes nothing")
	})
}

func TestGet(t *testing.T) {
	s := store.New()
	s.Create("a", "")
	s.Create("b", "")
	got, err := s.Get(2)
	require.NoError(t, err)
	assert.Equal(t, "b", got.Subject)
	_, err = s.Get(3)
	assert.ErrorIs(t, err, tasksessiond.ErrTaskNotFound)
}

func TestListIsACopy(t *testing.T) {
	// Ensures a caller holding a listing cannot change the store through it.
	s := store.New()
	s.Create("a", "")
	l := s.List()
	l[0].Subject = "changed"
	got, _ := s.Get(1)
	assert.Equal(t, "a", got.Subject)
}

func TestCounts(t *testing.T) {
	s := store.New()
	for range 4 {
		s.Create("t", "")
	}
	s.Update(tasksessiond.Change{Taskid: 1, Status: tasksessiond.InProgress})
	s.Update(tasksessiond.Change{Taskid: 2, Status: tasksessiond.Completed})
	s.Update(tasksessiond.Change{Taskid: 3, Status: tasksessiond.Deleted})
	s.Update(tasksessiond.Change{Taskid: 3, Status: tasksessiond.Deleted})
	assert.Equal(t, tasksessiond.Counts{Total: 4, Pending: 1, InProgress: 1, Completed: 1, Deleted: 1}, s.Counts())
}

func TestSnapshotRestore(t *testing.T) {
	// Ensures a restored store holds the same tasks and goes on numbering
	// from the saved next id, never reusing one.
	s := store.New()
	s.Create("a", "")
	s.Create("b", "")
	s.Update(tasksessiond.Change{Taskid: 2, Status: tasksessiond.Deleted})
	snap := s.Snapshot()

	r, err := store.Restore(snap)
	require.NoError(t, err)
	assert.Equal(t, s.List(), r.List())
	assert.Equal(t, s.Counts(), r.Counts())
	assert.Equal(t, 3, r.Create("c", "").Taskid)

	// A gap in the ids (never produced, but accepted) still finds each task.
	g, err := store.Restore(tasksessiond.Snapshot{Tasks: []tasksessiond.Task{{Taskid: 2, Status: tasksessiond.Pending}, {Taskid: 5, Status: tasksessiond.Completed}}, NextTaskid: 9})
	require.NoError(t, err)
	got, err := g.Get(5)
	require.NoError(t, err)
	assert.Equal(t, tasksessiond.Completed, got.Status)
	assert.Equal(t, 9, g.Create("x", "").Taskid)
}

func TestRestoreRejects(t *testing.T) {
	for name, snap := range map[string]tasksessiond.Snapshot{
		"NextBelowOne":  {NextTaskid: 0},
		"IdAtNext":      {Tasks: []tasksessiond.Task{{Taskid: 1, Status: tasksessiond.Pending}}, NextTaskid: 1},
		"OutOfOrder":    {Tasks: []tasksessiond.Task{{Taskid: 2, Status: tasksessiond.Pending}, {Taskid: 1, Status: tasksessiond.Pending}}, NextTaskid: 3},
		"Duplicate":     {Tasks: []tasksessiond.Task{{Taskid: 1, Status: tasksessiond.Pending}, {Taskid: 1, Status: tasksessiond.Pending}}, NextTaskid: 3},
		"InvalidStatus": {Tasks: []tasksessiond.Task{{Taskid: 1, Status: "done"}}, NextTaskid: 2},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := store.Restore(snap)
			assert.Error(t, err)
		})
	}
}

func TestOpenIsTheOpenTasks(t *testing.T) {
	// Ensures Open yields exactly the pending and in-progress tasks in
	// taskid order, however statuses move (reopened tasks included), and
	// after a restore.
	openOf := func(s *store.Store) (all, open []tasksessiond.Task) {
		for t := range s.All() {
			if t.Status.Open() {
				all = append(all, t)
			}
		}
		for t := range s.Open() {
			open = append(open, t)
		}
		return all, open
	}
	r := rand.New(rand.NewPCG(1, 2))
	s := store.New()
	for step := range 3000 {
		if s.Len() == 0 || r.IntN(3) == 0 {
			s.Create(fmt.Sprint("t", step), "")
		} else {
			st := tasksessiond.Statuses[r.IntN(len(tasksessiond.Statuses))]
			_, err := s.Update(tasksessiond.Change{Taskid: 1 + r.IntN(s.Len()), Status: st})
			require.NoError(t, err)
		}
		want, got := openOf(s)
		require.Equal(t, want, got, "step %d", step)
	}
	restored, err := store.Restore(s.Snapshot())
	require.NoError(t, err)
	want, got := openOf(restored)
	assert.Equal(t, want, got)
	assert.NotEmpty(t, got)
}
