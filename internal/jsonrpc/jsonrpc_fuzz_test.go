package jsonrpc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
)

// FuzzReader checks that framing never returns a line over the limit or
// with a newline in it, and always ends.
func FuzzReader(f *testing.F) {
	for _, s := range []string{"", "\n", "a\nb", "{\"x\":1}\n\n[1]\r\n", "\x00\xff\n"} {
		f.Add([]byte(s), 8)
	}
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max <= 0 || max > 1<<16 {
			max = 16
		}
		r := jsonrpc.NewReader(bytes.NewReader(in), max)
		for range len(in) + 2 {
			line, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if errors.Is(err, jsonrpc.ErrLineTooLong) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(line) > max || bytes.ContainsAny(line, "\n") || len(line) == 0 {
				t.Fatalf("bad line %q (max %d)", line, max)
			}
		}
		t.Fatal("reader did not reach EOF")
	})
}

// FuzzParse checks that any line yields either a parse error or requests
// and error responses that encode back to JSON.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"sessionId":"s","name":"TaskList"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"a"},3,{"jsonrpc":"2.0","method":"n"}]`,
		`{"jsonrpc":"1.0"}`, `[]`, `"x"`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		reqs, errs, batch, perr := jsonrpc.Parse(line, 0)
		if perr != nil {
			if len(reqs) > 0 || len(errs) > 0 {
				t.Fatal("parse error with results")
			}
			return
		}
		if !batch && len(reqs)+len(errs) != 1 {
			t.Fatalf("single message gave %d requests and %d errors", len(reqs), len(errs))
		}
		for _, r := range reqs {
			if r.JSONRPC != "2.0" || r.Method == "" {
				t.Fatalf("accepted invalid request %+v", r)
			}
		}
		for _, e := range errs {
			if _, err := json.Marshal(e); err != nil {
				t.Fatal(err)
			}
		}
	})
}
