package jsonrpc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/wire"
)

func readAll(t *testing.T, in string, max int) (lines []string, tooLong int) {
	t.Helper()
	r := jsonrpc.NewReader(strings.NewReader(in), max)
	for {
		line, err := r.Next()
		if errors.Is(err, io.EOF) {
			return lines, tooLong
		}
		if errors.Is(err, jsonrpc.ErrLineTooLong) {
			tooLong++
			continue
		}
		require.NoError(t, err)
		lines = append(lines, string(line))
	}
}

func TestReader(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		max      int
		want     []string
		tooLong  int
	}{
		{"Lines", "a\nb\n", 10, []string{"a", "b"}, 0},
		{"NoFinalNewline", "a\nb", 10, []string{"a", "b"}, 0},
		{"BlankLinesSkipped", "\n\n  \na\r\n\n", 10, []string{"a"}, 0},
		{"AtLimit", "12345\n", 5, []string{"12345"}, 0},
		{"OverLimitSkippedWhole", "123456\nok\n", 5, []string{"ok"}, 1},
		{"OverLimitAtEOF", "ok\n123456", 5, []string{"ok"}, 1},
		{"LongerThanBuffer", strings.Repeat("x", 200<<10) + "\nok\n", 100 << 10, []string{"ok"}, 1},
		{"LongWithinLimit", strings.Repeat("y", 150<<10) + "\n", 200 << 10, []string{strings.Repeat("y", 150<<10)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, tooLong := readAll(t, tc.in, tc.max)
			assert.Equal(t, tc.want, lines)
			assert.Equal(t, tc.tooLong, tooLong)
		})
	}
}

func TestLineBuffered(t *testing.T) {
	// Ensures the server can tell a line that arrived whole (read with no
	// deadline) from one still arriving (which must finish in time).
	pr, pw := io.Pipe()
	r := jsonrpc.NewReader(pr, 0)
	go pw.Write([]byte(`{"a":`))
	require.NoError(t, r.Wait())
	assert.False(t, r.LineBuffered(), "half a line")
	go pw.Write([]byte("1}\n{\"b\":2}\n"))
	line, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, `{"a":1}`, string(line))
	require.NoError(t, r.Wait())
	assert.True(t, r.LineBuffered(), "the next line came with it")
}

func TestParse(t *testing.T) {
	reqs, errs, batch, perr := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}`), 0)
	require.Nil(t, perr)
	assert.False(t, batch)
	assert.Empty(t, errs)
	require.Len(t, reqs, 1)
	assert.Equal(t, "m", reqs[0].Method)
	assert.False(t, reqs[0].IsNotification())

	reqs, _, _, _ = jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","method":"n"}`), 0)
	assert.True(t, reqs[0].IsNotification())

	_, _, _, perr = jsonrpc.Parse([]byte(`{"jsonrpc"`), 0)
	assert.ErrorIs(t, perr, &jsonrpc.Error{Code: wire.CodeParseError})

	reqs, errs, batch, perr = jsonrpc.Parse([]byte(`[{"jsonrpc":"2.0","id":"x","method":"m"}, {"jsonrpc":"2.0","id":"y"}, true]`), 0)
	require.Nil(t, perr)
	assert.True(t, batch)
	assert.Len(t, reqs, 1)
	require.Len(t, errs, 2)
	assert.Equal(t, `"y"`, string(errs[0].ID))
	assert.Equal(t, `null`, string(errs[1].ID))
}

func TestErrorIsComparesCode(t *testing.T) {
	e := jsonrpc.Errorf(wire.CodeSessionSealed, "sealed")
	assert.ErrorIs(t, e, &jsonrpc.Error{Code: wire.CodeSessionSealed})
	assert.NotErrorIs(t, e, &jsonrpc.Error{Code: wire.CodeInternal})
}

func TestParseRejectsTextJSONCannotCarry(t *testing.T) {
	// Ensures invalid UTF-8 and lone surrogate escapes are parse errors
	// answered with the request's id, not silently turned into U+FFFD;
	// valid pairs, escaped backslashes and plain non-ASCII text pass.
	for _, tc := range []struct {
		name, line, want string
	}{
		{"RawByte", "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"m\",\"params\":{\"s\":\"a\xffb\"}}", `invalid UTF-8 within "/params/s" after offset 53`},
		{"Truncated", "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"m\",\"params\":{\"s\":\"\xe2\x82\"}}", `invalid UTF-8 within "/params/s" after offset 52`},
		{"LoneHigh", `{"jsonrpc":"2.0","id":7,"method":"m","params":{"s":"a\ud83dz"}}`, "invalid surrogate pair `\\ud83dz"},
		{"LoneLow", `{"jsonrpc":"2.0","id":7,"method":"m","params":{"s":"\ude00"}}`, "invalid surrogate pair `\\ude00"},
		{"HighThenHigh", `{"jsonrpc":"2.0","id":7,"method":"m","params":{"s":"\ud83d\ud83d"}}`, "invalid surrogate pair"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs, errs, _, perr := jsonrpc.Parse([]byte(tc.line), 0)
			require.Nil(t, perr)
			assert.Empty(t, reqs)
			require.Len(t, errs, 1)
			assert.Equal(t, "7", string(errs[0].ID))
			assert.EqualValues(t, wire.CodeParseError, errs[0].Error.Code)
			assert.Contains(t, errs[0].Error.Message, tc.want)
		})
	}
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"s":"\ud83d\ude00 and é and \\ud83d"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"s":"\\\\\"\u00e9"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"s\":\"日本語 😀\"}}",
	} {
		reqs, errs, _, perr := jsonrpc.Parse([]byte(line), 0)
		require.Nil(t, perr, line)
		assert.Empty(t, errs, line)
		assert.Len(t, reqs, 1, line)
	}
}

func TestResponseIsEncodedOnce(t *testing.T) {
	// Ensures a result is written as the daemon encoded it — not compacted
	// and escaped again, as json.Marshal does to a json.RawMessage — and
	// that the envelope matches what json.Marshal would give.
	result := json.RawMessage(`{"text":"a <b> & c"}`)
	for _, id := range []json.RawMessage{json.RawMessage(`7`), json.RawMessage(`"x"`), nil} {
		r := jsonrpc.Response{JSONRPC: "2.0", ID: id, Result: result}
		got, err := r.AppendJSON([]byte("prefix"))
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(got, []byte("prefix")))
		got = got[len("prefix"):]
		assert.Contains(t, string(got), `"a <b> & c"`)
		assert.True(t, bytes.HasPrefix(got, []byte(wire.ResponseHead)), "the client reads the id from the head: %s", got)
		want, err := json.Marshal(r)
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(got))
	}
	e := jsonrpc.ErrorResponse(json.RawMessage(`1`), jsonrpc.Errorf(wire.CodeInvalidParams, "bad"))
	got, err := e.AppendJSON(nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`, string(got))
	assert.True(t, bytes.HasPrefix(got, []byte(wire.ResponseHead+`1,"error":`)), "an error response too: %s", got)

	// A response encoded whole is the line as it is: alone, not copied;
	// in a batch, appended.
	line := []byte(wire.ResponseHead + `2,"result":{"a":1}}`)
	got, err = jsonrpc.Response{Encoded: line}.AppendJSON(nil)
	require.NoError(t, err)
	assert.Same(t, &line[0], &got[0])
	got, err = jsonrpc.Response{Encoded: line}.AppendJSON([]byte("[x,"))
	require.NoError(t, err)
	assert.Equal(t, "[x,"+string(line), string(got))
}
