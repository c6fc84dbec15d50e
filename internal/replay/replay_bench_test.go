package replay_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/replay"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

// BenchmarkRun replays 10,000 logged calls (1,000 creates, then updates)
// with their recorded results, in memory: replay's own cost, without SQL.
func BenchmarkRun(b *testing.B) {
	live := store.New()
	calls := make([]replay.Call, 10_000)
	for i := range calls {
		name, args := tools.TaskCreate, `{"subject":"Write the parser tests","description":"Cover the error paths."}`
		if i >= 1000 {
			name, args = tools.TaskUpdate, fmt.Sprintf(`{"taskid":%d,"status":"completed"}`, i%1000+1)
		}
		c, _, _ := tools.Decode(name, json.RawMessage(args), tools.Live)
		_, t := tools.Execute(live, c)
		a := c.Append(tasksessiond.Call{}, t)
		calls[i] = replay.Call{Seq: int64(i + 1), Name: name, Arguments: json.RawMessage(args), Change: change(a)}
	}
	b.ReportMetric(float64(len(calls)), "rows/op")
	for b.Loop() {
		if r := replay.Run(store.New(), calls); r.Divergent != 0 {
			b.Fatal(r)
		}
	}
}

func change(a tasksessiond.Append) *tasksessiond.Change {
	if a.Task == nil {
		return nil
	}
	ch := &tasksessiond.Change{Taskid: a.Task.Taskid, Status: a.Task.Status}
	if a.SetSubject {
		ch.Subject = &a.Task.Subject
	}
	if a.SetDescription {
		ch.Description = &a.Task.Description
	}
	return ch
}
