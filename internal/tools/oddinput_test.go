package tools_test

// Odd input to tools.Decode, Canonical and Restore: what a client may send
// and what a row edited by hand may hold.

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/tools"
)

func decodeNoPanic(t *testing.T, name string, raw []byte, r tools.Rules) (c tools.Call, logged []byte, err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Decode(%s, %q) panicked: %v", name, raw, p)
		}
	}()
	return tools.Decode(name, raw, r)
}

func TestDecodeStringHoldingAString(t *testing.T) {
	// Ensures arguments given as a string holding a string (or a number,
	// an array...), unwrapped once by Canonical, are an ArgError the model
	// can correct, live and logged, never a panic.
	for _, args := range []string{`"\"{}\""`, `"\"x\""`, `"\"0\""`, `"\"[]\""`, `"\"{\\\"subject\\\":\\\"a\\\"}\""`} {
		require.True(t, jsontext.Value(args).IsValid(), args)
		for _, r := range []tools.Rules{tools.Live, tools.Logged} {
			t.Run(args, func(t *testing.T) {
				_, _, err := decodeNoPanic(t, tools.TaskCreate, []byte(args), r)
				var ae *tools.ArgError
				assert.True(t, err == nil || errors.As(err, &ae), "%q: %v", args, err)
			})
		}
	}
}

func TestLoggedNameTwiceDeeperThenTextJSONCannotCarry(t *testing.T) {
	// Ensures a logged call with a name twice deeper (in the ignored
	// wait_for_previous) and text that is not UTF-8 is read by the log's
	// rules (the text as U+FFFD), as the first version applied it: were it
	// skipped, every later taskid of the session would shift.
	for _, args := range []string{
		"{\"subject\":\"a\\ud800\",\"wait_for_previous\":{\"x\":1,\"x\":2}}",
		"{\"wait_for_previous\":{\"x\":1,\"x\":2},\"subject\":\"a\xff\"}",
	} {
		_, _, err := decodeNoPanic(t, tools.TaskCreate, []byte(args), tools.Logged)
		if assert.NoError(t, err, "%q", args) {
			continue
		}
		assert.NotContains(t, err.Error(), "invalid jsontext.Token", "%q", args)
	}
	// The same decoder, without the duplicate deeper, accepts it.
	_, _, err := decodeNoPanic(t, tools.TaskCreate, []byte("{\"subject\":\"a\\ud800\",\"wait_for_previous\":{\"x\":1}}"), tools.Logged)
	assert.NoError(t, err)
}

// FuzzDecodeLogged reads arbitrary bytes, not only JSON, as a log's
// row: a hand-edited row (or one an old version wrote, or one stored with
// PRAGMA ignore_check_constraints) can hold anything. Decode must not
// panic, must fail only with an ArgError or ErrUnknownTool, and must not
// word an error from a token it failed to read. And what a live call logs
// must replay as the same call (Live then Logged on its logged form).
func FuzzDecodeLogged(f *testing.F) {
	for _, s := range []string{
		`{"subject":"a","description":"b"}`, `{"taskid":"#3","status":"in_progress"}`, `"{\"subject\":\"x\"}"`,
		`"\"{}\""`, "{\"subject\":\"a\xff\"}", `{"subject":"\ud800"}`, "{\"subject\":\"a\x00\"}", `{"taskid":1e400}`,
		`{"taskid":123456789012345678901234567890}`, `[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
		"{\"a\":{\"x\":1,\"x\":2},\"\xff\":1}", `{"subject":"a"`, "\"\\\"\xff\\\"\"", "\x00", `{"SUBJECT":"a"}`,
	} {
		for _, name := range tools.Names() {
			f.Add(name, []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		tools.Canonical(args)
		c, _, err := decodeNoPanic(t, name, args, tools.Logged)
		if err != nil {
			var ae *tools.ArgError
			if !errors.As(err, &ae) && !errors.Is(err, tools.ErrUnknownTool) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			// (an ArgError's message: an unknown tool's quotes the name given)
			if ae != nil && (strings.Contains(ae.Msg, "invalid jsontext.Token") || strings.Contains(ae.Msg, "%!")) {
				t.Fatalf("%q: error worded from nothing: %v", args, err)
			}
		}
		_ = c
		if !jsontext.Value(bytes.TrimSpace(args)).IsValid() {
			return // the wire passes only this
		}
		live, logged, lerr := decodeNoPanic(t, name, args, tools.Live)
		if lerr != nil {
			return
		}
		again, _, rerr := decodeNoPanic(t, name, logged, tools.Logged)
		if rerr != nil {
			t.Fatalf("%q: applied live, logged as %q, which replay refuses: %v", args, logged, rerr)
		}
		if !sameCall(live, again) {
			t.Fatalf("%q: live %+v, replayed from %q as %+v", args, live, logged, again)
		}
	})
}

func sameCall(a, b tools.Call) bool {
	eq := func(x, y *string) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return a.Name == b.Name && a.Taskid == b.Taskid && a.Status == b.Status && eq(a.Subject, b.Subject) && eq(a.Description, b.Description)
}

// FuzzRestore: a stored result read back for a retry, whatever a
// hand-edited row holds, never panics.
func FuzzRestore(f *testing.F) {
	for _, s := range []string{`{"structuredContent":{"task":{"taskid":1,"status":"pending","subject":"a"}},"isError":false}`,
		`{"structuredContent":,"isError":false}`, "{\"structuredContent\":{\"task\":{\"subject\":\"\xff\"}},\"isError\":false}",
		`{"structuredContent":{"tasks":[{"taskid":1e400}]},"isError":false}`, `{"structuredContent":null,"isError":false}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, stored []byte) {
		tools.Restore(stored)
	})
}
