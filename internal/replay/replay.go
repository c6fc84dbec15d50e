// Package replay rebuilds a session's store from its logged tool calls, in
// order, as the spec's "restoring on resume" asks: each TaskCreate and
// TaskUpdate is applied again; TaskCreate numbers automatically, so a normal
// replay reproduces the original taskids.
package replay

import (
	"encoding/json"
	"fmt"

	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

// Call is one logged call. Result is the recorded CallToolResult, when there
// is one, to check the replayed task against.
type Call struct {
	Seq       int64
	Name      string
	Arguments json.RawMessage
	IsError   bool
	Result    json.RawMessage
}

// Outcome is what replay did with one call.
type Outcome int

const (
	Applied        Outcome = iota // a write, applied again
	Read                          // TaskList or TaskGet: nothing to apply
	SkippedError                  // recorded as an error then; must not succeed now
	SkippedInvalid                // arguments no longer decode (an older version's log)
)

// Report counts the outcomes of a replay. A divergence is a write whose
// replayed task differs from the one recorded, or that fails now although it
// was not recorded as an error (it is then also counted as skipped invalid).
type Report struct {
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

// Run applies calls to st in order.
func Run(st *store.Store, calls []Call) Report {
	var r Report
	for _, c := range calls {
		r.Add(Apply(st, c))
	}
	return r
}

// Add counts one step.
func (r *Report) Add(s Step) {
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

// Step is what applying one call did. Result and Task are set for an
// applied write: its result now and the task as it now is.
type Step struct {
	Outcome    Outcome
	Divergence *Divergence
	Result     tools.Result
	Task       *store.Task
}

// Apply applies one call to st.
func Apply(st *store.Store, c Call) Step {
	if c.IsError {
		return Step{Outcome: SkippedError}
	}
	call, err := tools.Decode(c.Name, c.Arguments)
	if err != nil {
		return Step{Outcome: SkippedInvalid}
	}
	if !call.Writes() {
		return Step{Outcome: Read}
	}
	s := Step{Outcome: Applied}
	s.Result, s.Task = tools.Execute(st, call)
	if s.Result.IsError {
		// Not applied: it changed nothing, now as it would have then had it failed.
		s.Outcome = SkippedInvalid
		s.Divergence = &Divergence{Seq: c.Seq, Msg: fmt.Sprintf("%s was recorded as a success but fails now: %s", c.Name, s.Result.Text())}
	} else if recorded, ok := recordedTask(c.Result); ok && recorded != *s.Task {
		s.Divergence = &Divergence{Seq: c.Seq, Msg: fmt.Sprintf("%s recorded task %+v, replay made %+v", c.Name, recorded, *s.Task)}
	}
	return s
}

func recordedTask(result json.RawMessage) (store.Task, bool) {
	if len(result) == 0 {
		return store.Task{}, false
	}
	var r struct {
		StructuredContent struct {
			Task *store.Task `json:"task"`
		} `json:"structuredContent"`
	}
	if json.Unmarshal(result, &r) != nil || r.StructuredContent.Task == nil {
		return store.Task{}, false
	}
	return *r.StructuredContent.Task, true
}
