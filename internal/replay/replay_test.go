package replay_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/replay"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

func call(seq int64, name, args string) replay.Call {
	return replay.Call{Seq: seq, Name: name, Arguments: json.RawMessage(args)}
}

func TestRunReproducesIDs(t *testing.T) {
	// Ensures replaying the log applies creates and updates in order, giving the same taskids.
	st := store.New()
	r := replay.Run(st, []replay.Call{
		call(1, tools.TaskCreate, `{"subject":"a"}`),
		call(2, tools.TaskList, `{}`),
		call(3, tools.TaskCreate, `{"subject":"b"}`),
		call(4, tools.TaskUpdate, `{"taskid":1,"status":"completed"}`),
		call(5, tools.TaskGet, `{"taskid":2}`),
	})
	assert.Equal(t, tasksessiond.ReplayReport{Applied: 3}, r)
	assert.Equal(t, []tasksessiond.Task{{Taskid: 1, Status: tasksessiond.Completed, Subject: "a"}, {Taskid: 2, Status: tasksessiond.Pending, Subject: "b"}}, st.List())
}

func TestRunSkips(t *testing.T) {
	// Ensures a row recorded as an error is skipped even though it would succeed
	// now (else every later taskid would shift), and undecodable rows are skipped.
	failed := call(2, tools.TaskCreate, `{"subject":"would succeed now"}`)
	failed.IsError = true
	st := store.New()
	r := replay.Run(st, []replay.Call{
		call(1, tools.TaskCreate, `{"subject":"a"}`),
		failed,
		call(3, tools.TaskCreate, `{"title":"older schema"}`),
		call(4, "TaskArchive", `{"taskid":1}`),
		call(5, tools.TaskCreate, `{"subject":"b"}`),
	})
	assert.Equal(t, 1, r.SkippedErrors)
	assert.Equal(t, 2, r.SkippedInvalid)
	assert.Equal(t, 2, r.Applied)
	assert.Equal(t, 0, r.Divergent)
	assert.Equal(t, 2, st.List()[1].Taskid)
}

func TestRunDivergence(t *testing.T) {
	// Ensures a recorded task that the replay does not reproduce is reported.
	recorded := func(taskid int, subject string) *tasksessiond.Change {
		return &tasksessiond.Change{Taskid: taskid, Status: tasksessiond.Pending, Subject: &subject}
	}
	c1 := call(1, tools.TaskCreate, `{"subject":"a"}`)
	c1.Change = recorded(1, "a")
	c2 := call(2, tools.TaskCreate, `{"subject":"b"}`)
	c2.Change = recorded(5, "b")                                         // the log says 5
	c3 := call(3, tools.TaskUpdate, `{"taskid":9,"status":"completed"}`) // not an error then, fails now

	st := store.New()
	r := replay.Run(st, []replay.Call{c1, c2, c3})
	assert.Equal(t, 2, r.Divergent)
	require.Len(t, r.Divergences, 2)
	assert.Equal(t, int64(2), r.Divergences[0].Seq)
	assert.Contains(t, r.Divergences[0].String(), "recorded task 5 pending")
	assert.Equal(t, int64(3), r.Divergences[1].Seq)
	assert.Contains(t, r.Divergences[1].Msg, "fails now")
	assert.Equal(t, 2, r.Applied)
	assert.Equal(t, 1, r.SkippedInvalid)
}
