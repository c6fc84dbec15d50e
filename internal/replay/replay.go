// Package replay rebuilds a session's store from its logged tool calls, in
// order, as the spec's "restoring on resume" asks: each TaskCreate and
// TaskUpdate is applied again; TaskCreate numbers automatically, so a normal
// replay reproduces the original taskids.
package replay

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

// Call is one logged call. Change is what the log recorded it changed,
// when it did, to check the replayed task against.
type Call struct {
	Seq       int64
	Name      string
	Arguments json.RawMessage
	IsError   bool
	Change    *tasksessiond.Change
}

// Outcome is what replay did with one call.
type Outcome int

const (
	Applied        Outcome = iota // a write, applied again
	Read                          // TaskList or TaskGet: nothing to apply
	SkippedError                  // recorded as an error then; must not succeed now
	SkippedInvalid                // arguments no longer decode (an older version's log)
)

// Run applies calls to st in order.
func Run(st *store.Store, calls []Call) tasksessiond.ReplayReport {
	var r tasksessiond.ReplayReport
	for _, c := range calls {
		Apply(st, c).Count(&r)
	}
	return r
}

// Count counts s in r.
func (s Step) Count(r *tasksessiond.ReplayReport) {
	switch s.Outcome {
	case Applied:
		r.Applied++
	case SkippedError:
		r.SkippedErrors++
	case SkippedInvalid:
		r.SkippedInvalid++
	}
	if s.Divergence != nil {
		r.Divergent++
		r.Divergences = append(r.Divergences, *s.Divergence)
	}
}

// Step is what applying one call did. Task is set for an applied write:
// the task as it now is.
type Step struct {
	Outcome    Outcome
	Divergence *tasksessiond.Divergence
	Task       *tasksessiond.Task
	Call       tools.Call // the decoded call, when applied
}

// Apply applies one call to st. It changes the store without rendering
// results, which is most of what a live call costs. Of the recorded
// results it checks the creates' (a taskid that differs shifts every later
// one); Check checks every write's.
func Apply(st *store.Store, c Call) Step {
	s, _ := apply(st, c, false, false)
	return s
}

// Check is Apply that compares every applied write's task with the one its
// recorded result holds, updates included: fsck's thoroughness, which the
// loader does without.
func Check(st *store.Store, c Call) Step {
	s, _ := apply(st, c, false, true)
	return s
}

// Render is Apply that also renders an applied write's result, for a
// transcript whose calls are logged as they are replayed.
func Render(st *store.Store, c Call) (Step, tools.Result) { return apply(st, c, true, false) }

func apply(st *store.Store, c Call, render, checkAll bool) (Step, tools.Result) {
	if c.IsError {
		return Step{Outcome: SkippedError}, tools.Result{}
	}
	call, _, err := tools.Decode(c.Name, c.Arguments, tools.Logged)
	if err != nil {
		return Step{Outcome: SkippedInvalid}, tools.Result{}
	}
	if !call.Writes() {
		return Step{Outcome: Read}, tools.Result{}
	}
	var res tools.Result
	var t tasksessiond.Task
	if render {
		var changed *tasksessiond.Task
		if res, changed = tools.Execute(st, call); res.IsError {
			err = errors.New(res.Text())
		} else {
			t = *changed
		}
	} else {
		t, err = tools.Apply(st, call)
	}
	if err != nil {
		// Not applied: it changed nothing, now as it would have then had it failed.
		return Step{Outcome: SkippedInvalid, Divergence: &tasksessiond.Divergence{Seq: c.Seq,
			Msg: fmt.Sprintf("%s was recorded as a success but fails now: %v", c.Name, err)}}, tools.Result{}
	}
	s := Step{Outcome: Applied, Task: &t, Call: call}
	// A create's recorded task is checked (its taskid above all: were one
	// to differ, every later id would); an update's result is parsed only
	// when asked, as updates are most of a log.
	if call.Name != tools.TaskCreate && !checkAll {
		return s, res
	}
	if c.Change != nil && !matches(*c.Change, t) {
		s.Divergence = &tasksessiond.Divergence{Seq: c.Seq, Msg: fmt.Sprintf("%s recorded %s, replay made %+v", c.Name, c.Change, t)}
	}
	return s, res
}

// matches reports whether t is what the log recorded a call changed. A
// description recorded before the log had columns of its own was taken
// from the result, which shortens a long one as the model was shown it.
func matches(ch tasksessiond.Change, t tasksessiond.Task) bool {
	switch {
	case ch.Taskid != t.Taskid || ch.Status != t.Status:
		return false
	case ch.Subject != nil && *ch.Subject != t.Subject:
		return false
	case ch.Description != nil && *ch.Description != t.Description:
		return *ch.Description == tools.Echo(t).Description
	}
	return true
}
