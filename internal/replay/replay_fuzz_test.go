package replay_test

import (
	"encoding/json"
	"testing"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/replay"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

// FuzzReplay replays arbitrary rows (as a corrupted or foreign log might
// hold): it must not panic, must account for every row, and must leave a
// store whose ids are increasing and below its next id.
func FuzzReplay(f *testing.F) {
	f.Add([]byte(`{"subject":"a"}`), []byte(`{"taskid":1,"status":"completed"}`), []byte(`{}`), uint8(0), []byte(`{"structuredContent":{"task":{"taskid":1}}}`))
	f.Add([]byte(`"{\"subject\":\"x\"}"`), []byte(`{"taskid":"#9"}`), []byte(`null`), uint8(5), []byte(`not json`))
	f.Add([]byte(`[]`), []byte(`{"title":"old"}`), []byte(`{"taskid":1e400}`), uint8(255), []byte(``))
	f.Fuzz(func(t *testing.T, a, b, c []byte, flags uint8, result []byte) {
		names := tools.Names()
		var calls []replay.Call
		for i, args := range [][]byte{a, b, c, a, b} {
			calls = append(calls, replay.Call{
				Seq: int64(i + 1), Name: names[(int(flags)+i)%len(names)], Arguments: json.RawMessage(args),
				IsError: flags&(1<<i) != 0 && i < 3, Change: fuzzChange(result),
			})
		}
		st := store.New()
		r := replay.Run(st, calls)
		if r.Applied+r.SkippedErrors+r.SkippedInvalid > len(calls) || r.Divergent > len(calls) {
			t.Fatalf("report counts more rows than given: %+v", r)
		}
		prev := 0
		for _, task := range st.List() {
			if task.Taskid <= prev || task.Taskid >= st.NextTaskid() || !task.Status.Valid() {
				t.Fatalf("bad store after replay: %+v", st.List())
			}
			prev = task.Taskid
		}
	})
}

// fuzzChange makes a recorded change of the fuzzer's bytes: a taskid, a
// status, maybe a subject.
func fuzzChange(b []byte) *tasksessiond.Change {
	if len(b) == 0 {
		return nil
	}
	ch := &tasksessiond.Change{Taskid: int(b[0]), Status: tasksessiond.Status(b[1%len(b):])}
	if len(b) > 2 {
		s := string(b[2:])
		ch.Subject = &s
	}
	return ch
}
