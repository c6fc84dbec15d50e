package server

import (
	"testing"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/wire"
)

// BenchmarkParseToolCall is what a tools/call line costs before it reaches
// the session: framing checks, the envelope, the params.
func BenchmarkParseToolCall(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"sessionId":"01a23d72-81ce-7bbe-9e6d-0dee88c81d62","name":"TaskCreate","callId":"toolu_01A09q90qw90lq917835lq9","arguments":{"subject":"Step 4: write the parser tests","description":"Cover the error paths of the config parser: missing keys, wrong types and a file that is not UTF-8; run them under -race."}}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		reqs, _, _, perr := jsonrpc.Parse(line)
		if perr != nil || len(reqs) != 1 {
			b.Fatal(perr)
		}
		var p wire.ToolCall
		if err := decode(reqs[0].Method, reqs[0].Params, &p); err != nil {
			b.Fatal(err)
		}
	}
}
