package server

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// decoders is the server's table of params decoders, without a server.
func decoders() func(string) jsonrpc.ParamsDecoder {
	s := &Server{params: map[string]jsonrpc.ParamsDecoder{}}
	for name, m := range s.methods() {
		if m.params != nil {
			s.params[name] = m.params
		}
	}
	return s.paramsDecoder
}

// slowToolCall is what a tools/call line decodes to by the path every line
// took before the one-pass parse: the envelope, the params, the arguments,
// each decoded on its own.
func slowToolCall(t testing.TB, line []byte) (p wire.ToolCall, call tools.Call, callErr error, perr *jsonrpc.Error, err error) {
	reqs, errs, _, perr := jsonrpc.Parse(line)
	if perr != nil || len(errs) > 0 {
		if len(errs) > 0 {
			perr = errs[0].Error
		}
		return p, call, nil, perr, nil
	}
	if err := decode(wire.MethodToolsCall, reqs[0].Params, &p); err != nil {
		return p, call, nil, nil, err
	}
	p.Arguments = tools.Canonical(p.Arguments)
	call, callErr = tools.Decode(p.Name, p.Arguments)
	return p, call, callErr, nil, nil
}

func TestOnePassParseAgreesWithTheOldPath(t *testing.T) {
	// Ensures a line of the usual form is read in one pass — envelope,
	// params and a tool's arguments, into their final types — and to
	// exactly what the step-by-step path made of it (arguments as logged,
	// the call, the argument error's message), and that a line of any
	// other form is left to that path.
	const head = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":`
	for _, tc := range []struct {
		name, params string
		onePass      bool
	}{
		{"Create", `{"sessionId":"s","name":"TaskCreate","callId":"c1","arguments":{"subject":"Write the tests","description":"Cover the errors."}}`, true},
		{"UpdateWithSpaces", `{ "sessionId" : "s", "name" : "TaskUpdate", "arguments" : { "taskid" : 3, "status" : "completed" } }`, true},
		{"TaskidAsString", `{"sessionId":"s","name":"TaskUpdate","arguments":{"taskid":"#3","status":"in_progress"}}`, true},
		{"Escapes", `{"sessionId":"s","name":"TaskCreate","arguments":{"subject":"caf\u00e9 \"x\" < y","description":"a\nb"}}`, true},
		{"NullOptional", `{"sessionId":"s","name":"TaskCreate","arguments":{"subject":"a","description":null}}`, true},
		{"EmptySubject", `{"sessionId":"s","name":"TaskCreate","arguments":{"subject":"  "}}`, true},
		{"UnknownArgument", `{"sessionId":"s","name":"TaskUpdate","arguments":{"taskid":1,"id":2}}`, true},
		{"NothingToChange", `{"sessionId":"s","name":"TaskUpdate","arguments":{"taskid":1}}`, true},
		{"WrongKind", `{"sessionId":"s","name":"TaskGet","arguments":{"taskid":[1]}}`, true},
		{"Role", `{"sessionId":"s","name":"TaskList","role":"compact_worker","arguments":{}}`, true},
		{"ArgumentsBeforeName", `{"sessionId":"s","arguments":{"subject":"a"},"name":"TaskCreate"}`, true},
		{"ArgumentsAsString", `{"sessionId":"s","name":"TaskCreate","arguments":"{\"subject\":\"a\"}"}`, true},
		{"NoArguments", `{"sessionId":"s","name":"TaskList"}`, true},
		{"ArgumentGivenTwice", `{"sessionId":"s","name":"TaskCreate","arguments":{"subject":"a","subject":"b"}}`, false},
		{"UnknownParam", `{"sessionId":"s","name":"TaskList","session_id":"x"}`, false},
		{"OtherCase", `{"SessionId":"s","name":"TaskList"}`, false},
		{"SessionIDNotAString", `{"sessionId":5,"name":"TaskList"}`, false},
		{"NotUTF8", "{\"sessionId\":\"s\",\"name\":\"TaskCreate\",\"arguments\":{\"subject\":\"\xff\"}}", false},
		{"LoneSurrogate", `{"sessionId":"s","name":"TaskCreate","arguments":{"subject":"\ud800"}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := []byte(head + tc.params + "}")
			reqs, errs, _, perr := jsonrpc.ParseWith(line, decoders())
			wantP, wantCall, wantCallErr, wantPerr, wantErr := slowToolCall(t, line)
			v, onePass := toolCall{}, false
			if perr == nil && len(errs) == 0 {
				v, onePass = reqs[0].Value.(toolCall)
			}
			require.Equal(t, tc.onePass, onePass, "read in one pass")
			if !onePass {
				// Left to the old path: the same answer as before.
				if perr != nil || len(errs) > 0 {
					if len(errs) > 0 {
						perr = errs[0].Error
					}
					assert.Equal(t, wantPerr, perr)
				} else {
					var p wire.ToolCall
					err := decode(wire.MethodToolsCall, reqs[0].Params, &p)
					assert.Equal(t, wantErr, err)
				}
				return
			}
			require.Nil(t, wantPerr)
			require.NoError(t, wantErr)
			assert.Equal(t, wantP.SessionID, v.SessionID)
			assert.Equal(t, wantP.Name, v.Name)
			assert.Equal(t, wantP.CallID, v.CallID)
			assert.Equal(t, wantP.Role, v.Role)
			assert.Equal(t, string(wantP.Arguments), string(tools.Canonical(v.Arguments)), "arguments as logged")
			if v.args == nil {
				return // kept raw: the session decodes them as before
			}
			assert.Equal(t, wantCall, v.args.Call)
			if wantCallErr == nil {
				assert.NoError(t, v.args.Err)
			} else {
				require.Error(t, v.args.Err)
				assert.Equal(t, wantCallErr.Error(), v.args.Err.Error())
			}
		})
	}
}

func TestOnePassParseOfOtherMethods(t *testing.T) {
	// Ensures every other method with params of its own type has them read
	// in the same pass, to what decode made of them.
	line := []byte(`{"jsonrpc":"2.0","id":"a","method":"sessions/create","params":{"sessionId":"x","title":"T","metadata":{"k":[1,2]}}}`)
	reqs, _, _, perr := jsonrpc.ParseWith(line, decoders())
	require.Nil(t, perr)
	got, ok := reqs[0].Value.(wire.CreateSession)
	require.True(t, ok, "read in one pass")
	var want wire.CreateSession
	require.NoError(t, decode(wire.MethodSessionsCreate, json.RawMessage(`{"sessionId":"x","title":"T","metadata":{"k":[1,2]}}`), &want))
	assert.Equal(t, want, got)

	// A method that reads its own params (sessions/watch) leaves the line
	// to the old path, whose check finds a name given twice in any case
	// (encoding/json would read "sessionID" over "sessionId").
	line = []byte(`{"jsonrpc":"2.0","id":1,"method":"sessions/watch","params":{"sessionId":"a","sessionID":"b"}}`)
	reqs, errs, _, perr := jsonrpc.ParseWith(line, decoders())
	require.Nil(t, perr)
	require.Empty(t, reqs)
	require.Len(t, errs, 1)
	assert.Equal(t, wire.CodeInvalidParams, errs[0].Error.Code)
	assert.Contains(t, errs[0].Error.Message, "given twice")
}

// FuzzOnePassParse checks that whatever line the one-pass parse accepts,
// the step-by-step path accepts too and reads the same.
func FuzzOnePassParse(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"sessionId":"s","name":"TaskCreate","arguments":{"subject":"a","description":"b"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"TaskUpdate","arguments":{"taskid":"3","status":"completed"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"sessions/get","params":{"sessionId":"s"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"sessions/list","params":{"status":"active","limit":10}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":5,"method":"sessions/watch","params":{"sessionId":"a","sessionID":"b"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":4,"method":"sessions/replay","params":{"sessionId":"s","calls":[{"name":"TaskCreate","arguments":{"subject":"a"}}]}}`))
	dec := decoders()
	f.Fuzz(func(t *testing.T, line []byte) {
		reqs, errs, _, perr := jsonrpc.ParseWith(line, dec)
		if perr != nil || len(errs) > 0 {
			return
		}
		// Every line the one pass accepts, the old path reads alike.
		old, oldErrs, _, oldPerr := jsonrpc.Parse(line)
		if oldPerr != nil || len(oldErrs) > 0 || len(old) != 1 || len(reqs) != 1 {
			t.Fatalf("%q: one pass gave %d requests, the old path %d (%v %v)", line, len(reqs), len(old), oldPerr, oldErrs)
		}
		if string(old[0].ID) != string(reqs[0].ID) || old[0].Method != reqs[0].Method || old[0].JSONRPC != reqs[0].JSONRPC {
			t.Fatalf("%q: one pass read %+v, the old path %+v", line, reqs[0], old[0])
		}
		if reqs[0].Value == nil {
			if string(old[0].Params) != string(reqs[0].Params) {
				t.Fatalf("%q: one pass kept params %q, the old path %q", line, reqs[0].Params, old[0].Params)
			}
			return
		}
		v, ok := reqs[0].Value.(toolCall)
		if !ok {
			// Another method's params: what decode makes of them.
			want := reflect.New(reflect.TypeOf(reqs[0].Value))
			if err := decode(old[0].Method, old[0].Params, want.Interface()); err != nil {
				t.Fatalf("one pass accepted %q, decode refused it: %v", line, err)
			}
			if !reflect.DeepEqual(want.Elem().Interface(), reqs[0].Value) {
				t.Fatalf("%q: one pass read %+v, decode %+v", line, reqs[0].Value, want.Elem().Interface())
			}
			return
		}
		p, call, callErr, wantPerr, err := slowToolCall(t, line)
		if wantPerr != nil || err != nil {
			t.Fatalf("one pass accepted %q, the old path refused it: %v %v", line, wantPerr, err)
		}
		if p.SessionID != v.SessionID || p.Name != v.Name || p.CallID != v.CallID || p.Role != v.Role ||
			string(p.Arguments) != string(tools.Canonical(v.Arguments)) {
			t.Fatalf("%q: one pass read %+v, the old path %+v", line, v.ToolCall, p)
		}
		if v.args != nil && ((callErr == nil) != (v.args.Err == nil) || callErr == nil && !assert.ObjectsAreEqual(call, v.args.Call) ||
			callErr != nil && callErr.Error() != v.args.Err.Error()) {
			t.Fatalf("%q: one pass decoded %+v (%v), the old path %+v (%v)", line, v.args.Call, v.args.Err, call, callErr)
		}
	})
}

// BenchmarkParseToolCall is what a tools/call line costs before it reaches
// the session's apply: the envelope, the params and the arguments, in the
// one pass (and by the step-by-step path, the baseline of the same run).
func BenchmarkParseToolCall(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"sessionId":"01a23d72-81ce-7bbe-9e6d-0dee88c81d62","name":"TaskCreate","callId":"toolu_01A09q90qw90lq917835lq9","arguments":{"subject":"Step 4: write the parser tests","description":"Cover the error paths of the config parser: missing keys, wrong types and a file that is not UTF-8; run them under -race."}}}`)
	dec := decoders()
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			reqs, _, _, perr := jsonrpc.ParseWith(line, dec)
			if v, ok := reqs[0].Value.(toolCall); perr != nil || !ok || v.args == nil || v.args.Err != nil {
				b.Fatal(perr)
			}
		}
	})
	b.Run("step-by-step", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			if _, _, callErr, perr, err := slowToolCall(b, line); perr != nil || err != nil || callErr != nil {
				b.Fatal(perr, err, callErr)
			}
		}
	})
}
