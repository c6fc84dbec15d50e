package tasksessiond_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
)

func TestParseStatus(t *testing.T) {
	// Ensures the four statuses parse in any case, with the spellings models
	// use for inprogress, and nothing else does.
	for in, want := range map[string]tasksessiond.Status{
		"pending": tasksessiond.Pending, "inprogress": tasksessiond.InProgress, "in_progress": tasksessiond.InProgress,
		"in-progress": tasksessiond.InProgress, "Completed": tasksessiond.Completed, " deleted ": tasksessiond.Deleted,
	} {
		got, err := tasksessiond.ParseStatus(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "done", "in progress", "cancelled"} {
		_, err := tasksessiond.ParseStatus(in)
		assert.Error(t, err, in)
	}
}

func TestAppendColumns(t *testing.T) {
	// Ensures a write's log row holds the task's id and status after it and
	// only the text fields the call set (a status change does not store a
	// long description again), and a read or an error holds none.
	task := &tasksessiond.Task{Taskid: 3, Status: tasksessiond.Completed, Subject: "s", Description: "d"}
	for name, tc := range map[string]struct {
		a    tasksessiond.Append
		want [4]any
	}{
		"Create":      {tasksessiond.Append{Task: task, SetSubject: true, SetDescription: true}, [4]any{int64(3), "completed", "s", "d"}},
		"StatusOnly":  {tasksessiond.Append{Task: task}, [4]any{int64(3), "completed", nil, nil}},
		"Subject":     {tasksessiond.Append{Task: task, SetSubject: true}, [4]any{int64(3), "completed", "s", nil}},
		"ReadOrError": {tasksessiond.Append{}, [4]any{}},
	} {
		assert.Equal(t, tc.want, tc.a.Columns(), name)
		if tc.a.Task == nil {
			assert.Nil(t, tc.a.Change(), name)
		} else {
			assert.True(t, tc.a.Change().Equal(tc.a.Change()), name)
		}
	}
	sub, other := "s", "t"
	a := &tasksessiond.Change{Taskid: 1, Status: tasksessiond.Pending, Subject: &sub}
	assert.True(t, a.Equal(&tasksessiond.Change{Taskid: 1, Status: tasksessiond.Pending, Subject: &sub}))
	assert.False(t, a.Equal(&tasksessiond.Change{Taskid: 1, Status: tasksessiond.Pending, Subject: &other}))
	assert.False(t, a.Equal(&tasksessiond.Change{Taskid: 1, Status: tasksessiond.Pending}))
	assert.False(t, a.Equal(nil))
	assert.True(t, (*tasksessiond.Change)(nil).Equal(nil))
	assert.True(t, tasksessiond.Change{Taskid: 1}.Empty())
	assert.False(t, tasksessiond.Change{Taskid: 1, Status: tasksessiond.Deleted}.Empty())
}

func TestKindOf(t *testing.T) {
	// Ensures a wrapped Error keeps its kind and its cause, and any other
	// error is internal.
	cause := errors.New("disk full")
	err := fmt.Errorf("append: %w", &tasksessiond.Error{Kind: tasksessiond.KindUnavailable, Message: "m", Err: cause})
	assert.Equal(t, tasksessiond.KindUnavailable, tasksessiond.KindOf(err))
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, "append: m: disk full", err.Error())
	assert.Equal(t, tasksessiond.KindInternal, tasksessiond.KindOf(cause))
	assert.Equal(t, tasksessiond.KindInvalid, tasksessiond.KindOf(tasksessiond.Errorf(tasksessiond.KindInvalid, "bad %d", 1)))
}

func TestCounts(t *testing.T) {
	// Ensures counting by status adds up, and a change of status moves a
	// task from one count to another.
	c := tasksessiond.CountOf([]tasksessiond.Task{{Status: tasksessiond.Pending}, {Status: tasksessiond.Pending}, {Status: tasksessiond.Deleted}})
	require.Equal(t, tasksessiond.Counts{Total: 3, Pending: 2, Deleted: 1}, c)
	c.Add(tasksessiond.Pending, -1)
	c.Add(tasksessiond.InProgress, 1)
	assert.Equal(t, tasksessiond.Counts{Total: 3, Pending: 1, InProgress: 1, Deleted: 1}, c)
}
