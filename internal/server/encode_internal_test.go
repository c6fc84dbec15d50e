package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/compact"
	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// bigStore holds n tasks of the bench's usual size, every other one
// completed; its subjects carry what JSON escapes.
func bigStore(tb testing.TB, n int) *store.Store {
	st := store.New()
	done := tasksessiond.Completed
	for i := range n {
		st.Create(fmt.Sprintf("Step %d: write the \"parser\" tests <é>\u2028", i+1),
			"Cover the error paths of the config parser: missing keys, wrong types and a file that is not UTF-8;\nrun them under -race.")
		if i%2 == 1 {
			if _, err := st.Update(tasksessiond.Change{Taskid: i/2 + 1, Status: done}); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return st
}

// compacted is a compaction's reply for st.
func compacted(tb testing.TB, st *store.Store) wire.Compacted {
	result, err := json.Marshal(tools.ListResult(st))
	if err != nil {
		tb.Fatal(err)
	}
	return wire.Compacted{
		Session:    tasksessiond.Session{ID: "succ", Metadata: json.RawMessage(`{}`), Status: "active"},
		Messages:   []tasksessiond.Message{{Role: "system", Kind: compact.KindTaskSnapshot, Content: compact.Text(st)}},
		ForcedCall: wire.ForcedCall{CallID: "f", Name: tools.TaskList, Arguments: map[string]any{}, Result: result},
	}
}

func TestEncodeResponse(t *testing.T) {
	// Ensures a response encoded straight into its line is what encoding
	// the result and then the envelope gave (HTML characters left as they
	// are), for every id form; and that the lines carrying a whole list
	// fit the buffer sized for them, so it is allocated once.
	st := bigStore(t, 2_000)
	forced := wire.ForcedCall{Result: json.RawMessage(`{"content":[]}`)}
	tasks := st.List()
	results := map[string]any{
		"compacted": compacted(t, st),
		"snapshot":  wire.Snapshot{Tasks: tasks, NextTaskid: st.NextTaskid(), Text: compact.Text(st)},
		"resumed":   wire.Resumed{Tasks: tasks, Messages: []tasksessiond.Message{{Content: compact.Text(st)}}, ForcedCall: &forced},
		"empty":     wire.Resumed{}, // nil slices: null, as encoding/json has them
		"small":     wire.SessionResult{Session: tasksessiond.Session{ID: "a<b>&c", Metadata: json.RawMessage(`{"k": 1}`)}},
	}
	for name, v := range results {
		for _, id := range []json.RawMessage{json.RawMessage(`7`), json.RawMessage(`"x"`), nil} {
			t.Run(fmt.Sprintf("%s/%s", name, id), func(t *testing.T) {
				line, err := encodeResponse(id, v)
				require.NoError(t, err)
				var result bytes.Buffer
				enc := json.NewEncoder(&result)
				enc.SetEscapeHTML(false)
				require.NoError(t, enc.Encode(v))
				want, err := jsonrpc.Response{JSONRPC: "2.0", ID: id, Result: bytes.TrimSuffix(result.Bytes(), []byte("\n"))}.AppendJSON(nil)
				require.NoError(t, err)
				assert.Equal(t, string(want), string(line))
				if name != "small" && name != "empty" {
					assert.LessOrEqual(t, len(line), len(jsonrpc.AppendResultHead(nil, id))+sizeHint(v)+1)
				}
			})
		}
	}
}

// BenchmarkEncodeCompacted is the encoding of a 10,000-task compaction's
// reply, from the method's result to the line the writer sends: as it is
// done, and by encoding/json as small results are (the reply wrapped in a
// type sizeHint does not know), each with the encoders' pools warm and
// emptied by a GC before each reply, as they are for a compaction now and
// then.
func BenchmarkEncodeCompacted(b *testing.B) {
	v := compacted(b, bigStore(b, 10_000))
	id := json.RawMessage(`7`)
	for _, enc := range []struct {
		name string
		v    any
	}{{"in-place", v}, {"encoding-json", struct{ wire.Compacted }{v}}} {
		for _, cold := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/cold=%t", enc.name, cold), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if cold {
						b.StopTimer()
						runtime.GC()
						runtime.GC()
						b.StartTimer()
					}
					line, err := encodeResponse(id, enc.v)
					if err != nil {
						b.Fatal(err)
					}
					b.SetBytes(int64(len(line)))
				}
			})
		}
	}
}
