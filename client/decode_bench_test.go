package client

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/wire"
)

// BenchmarkDecodeResponse decodes the reply to the compaction of a session
// of 10,000 tasks (the injected list is 1.8 MB of text), with the client's
// decoder and, as the baseline of the same run, with encoding/json.
func BenchmarkDecodeResponse(b *testing.B) {
	var list strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&list, "\n#%d [pending] Step %d: write the parser tests\n    Cover the error paths of the config parser: missing keys, wrong types and a file that is not UTF-8; run them under -race.", i+1, i+1)
	}
	result, err := json.Marshal(wire.Compacted{Messages: []tasksessiond.Message{{Role: "system", Kind: "task_snapshot", Content: list.String()}}})
	if err != nil {
		b.Fatal(err)
	}
	line := []byte(`{"jsonrpc":"2.0","id":7,"result":` + string(result) + `}`)
	b.Run("client", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			var out wire.Compacted
			if err := decodeResponse(line, &out); err != nil || len(out.Messages[0].Content) != list.Len() {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			var env struct {
				Result wire.Compacted `json:"result"`
			}
			if err := json.Unmarshal(line, &env); err != nil || len(env.Result.Messages[0].Content) != list.Len() {
				b.Fatal(err)
			}
		}
	})
}
