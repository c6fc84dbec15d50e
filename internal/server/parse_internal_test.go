package server

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
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

// v1Decode is how params were decoded before the one pass, and the
// reference its answers are held to: encoding/json, strictly, its error
// worded for the client.
func v1Decode(method string, params json.RawMessage, v any) *jsonrpc.Error {
	params = bytes.TrimSpace(params)
	if len(params) == 0 || bytes.Equal(params, []byte("null")) {
		params = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonrpc.Errorf(wire.CodeInvalidParams, "invalid params for %s: %s", method, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// v1Envelope is a request as encoding/json reads it.
type v1Envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

func TestToolCallIsReadInOnePass(t *testing.T) {
	// Ensures a tools/call line of any shape is read in the one pass —
	// envelope, params and the tool's arguments, into their final types —
	// to what encoding/json and tools.Decode make of them (the arguments
	// as logged, the call, the argument error's message), and that what
	// cannot be read is answered as before: params encoding/json refuses
	// with its words, a name given twice, text JSON cannot carry.
	const head = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":`
	for _, tc := range []struct {
		name, params string
		want         string // the error answered (code, message part); "" if read
	}{
		{"Create", `{"sessionId":"s","name":"TaskCreate","callId":"c1","arguments":{"subject":"Write the tests","description":"Cover the errors."}}`, ""},
		{"UpdateWithSpaces", `{ "sessionId" : "s", "name" : "TaskUpdate", "arguments" : { "taskid" : 3, "status" : "completed" } }`, ""},
		{"TaskidAsString", `{"sessionId":"s","name":"TaskUpdate","arguments":{"taskid":"#3","status":"in_progress"}}`, ""},
		{"Escapes", `{"sessionId":"s","name":"TaskCreate","arguments":{"subject":"caf\u00e9 \"x\" < y","description":"a\nb"}}`, ""},
		{"NullOptional", `{"sessionId":"s","name":"TaskCreate","arguments":{"subject":"a","description":null}}`, ""},
		{"EmptySubject", `{"sessionId":"s","name":"TaskCreate","arguments":{"subject":"  "}}`, ""},
		{"UnknownArgument", `{"sessionId":"s","name":"TaskUpdate","arguments":{"taskid":1,"id":2}}`, ""},
		{"NothingToChange", `{"sessionId":"s","name":"TaskUpdate","arguments":{"taskid":1}}`, ""},
		{"WrongKind", `{"sessionId":"s","name":"TaskGet","arguments":{"taskid":[1]}}`, ""},
		{"Role", `{"sessionId":"s","name":"TaskList","role":"compact_worker","arguments":{}}`, ""},
		{"ArgumentsBeforeName", `{"sessionId":"s","arguments":{"subject":"a"},"name":"TaskCreate"}`, ""},
		{"ArgumentsAsString", `{"sessionId":"s","name":"TaskCreate","arguments":"{\"subject\":\"a\"}"}`, ""},
		{"NoArguments", `{"sessionId":"s","name":"TaskList"}`, ""},
		{"ArgumentGivenTwice", `{"sessionId":"s","name":"TaskCreate","arguments":{"subject":"a","subject":"b"}}`, ""},
		{"ArgumentGivenTwiceBeforeName", `{"sessionId":"s","arguments":{"subject":"a","subject":"b"},"name":"TaskCreate"}`, ""},
		{"NameTwiceInsideAnArgument", `{"sessionId":"s","name":"TaskCreate","arguments":{"subject":{"a":1,"a":2}}}`, ""},
		{"OtherCase", `{"SessionId":"s","name":"TaskList"}`, ""},
		{"MemberNull", `{"sessionId":"s","name":"TaskList","callId":null}`, ""},
		{"UnknownParam", `{"sessionId":"s","name":"TaskList","session_id":"x"}`, `-32602 invalid params for tools/call: unknown field "session_id"`},
		{"SessionIDNotAString", `{"sessionId":5,"name":"TaskList"}`, `-32602 invalid params for tools/call: cannot unmarshal number into Go struct field ToolCall.sessionId of type string`},
		{"ParamsArray", `[1]`, `-32602 invalid params for tools/call: cannot unmarshal array into Go value of type wire.ToolCall`},
		{"ParamGivenTwice", `{"sessionId":"s","sessionId":"t","name":"TaskList"}`, `-32602 invalid params: "sessionId" is given twice; give each member once`},
		{"ParamGivenTwiceInAnotherCase", `{"sessionId":"s","SESSIONID":"t","name":"TaskList"}`, `-32602 invalid params: "SESSIONID" is given twice; give each member once`},
		{"NotUTF8", "{\"sessionId\":\"s\",\"name\":\"TaskCreate\",\"arguments\":{\"subject\":\"\xff\"}}", `-32700 parse error: the message is not valid UTF-8 (byte 0xff at offset 116)`},
		{"LoneSurrogate", `{"sessionId":"s","name":"TaskCreate","arguments":{"subject":"\ud800"}}`, `-32700 parse error: the message holds a lone UTF-16 surrogate \ud800 at offset 116`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := []byte(head + tc.params + "}")
			reqs, errs, _, perr := jsonrpc.Parse(line, decoders())
			require.Nil(t, perr)
			var got *jsonrpc.Error
			switch {
			case len(errs) > 0:
				require.Empty(t, reqs)
				require.Len(t, errs, 1)
				assert.Equal(t, "7", string(errs[0].ID))
				got = errs[0].Error
			default:
				require.Len(t, reqs, 1)
				got = reqs[0].ParamsErr
			}
			if tc.want != "" {
				require.NotNil(t, got, "refused")
				code, msg, _ := strings.Cut(tc.want, " ")
				assert.Equal(t, code, strconv.FormatInt(got.Code, 10))
				assert.Contains(t, got.Message, msg)
				if got.Code == wire.CodeInvalidParams && !strings.Contains(msg, "given twice") {
					var p wire.ToolCall
					assert.Equal(t, v1Decode(wire.MethodToolsCall, json.RawMessage(tc.params), &p), got, "encoding/json's words")
				}
				return
			}
			require.Nil(t, got)
			v, ok := reqs[0].Params.(toolCall)
			require.True(t, ok, "read into tools/call's params")
			var want wire.ToolCall
			require.Nil(t, v1Decode(wire.MethodToolsCall, json.RawMessage(tc.params), &want))
			assert.Equal(t, want.SessionID, v.SessionID)
			assert.Equal(t, want.Name, v.Name)
			assert.Equal(t, want.CallID, v.CallID)
			assert.Equal(t, want.Role, v.Role)
			assert.Equal(t, string(tools.Canonical(want.Arguments)), string(tools.Canonical(v.Arguments)), "arguments as logged")
			require.NotNil(t, v.args, "the arguments are decoded in the pass")
			wantCall, wantErr := tools.Decode(want.Name, tools.Canonical(want.Arguments))
			assert.Equal(t, wantCall, v.args.Call)
			if wantErr == nil {
				assert.NoError(t, v.args.Err)
			} else {
				require.Error(t, v.args.Err)
				assert.Equal(t, wantErr.Error(), v.args.Err.Error())
			}
		})
	}
}

func TestParamsOfOtherMethodsAreReadInThePass(t *testing.T) {
	// Ensures every other method has its params read into its own type in
	// the same pass, to what encoding/json made of them, whatever the
	// order of the envelope's members; and that a name given twice in
	// the params, in any case (encoding/json would read "sessionID" over
	// "sessionId"), is refused.
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":"a","method":"sessions/create","params":{"sessionId":"x","title":"T","metadata":{"k":[1,2]}}}`,
		`{"params":{"sessionId":"x","title":"T","metadata":{"k":[1,2]}},"id":"a","method":"sessions/create","jsonrpc":"2.0"}`,
		`[{"jsonrpc":"2.0","id":"a","params":{"sessionId":"x","title":"T","metadata":{"k":[1,2]}},"method":"sessions/create"}]`,
	} {
		reqs, errs, _, perr := jsonrpc.Parse([]byte(line), decoders())
		require.Nil(t, perr)
		require.Empty(t, errs)
		require.Len(t, reqs, 1)
		require.Nil(t, reqs[0].ParamsErr)
		got, ok := reqs[0].Params.(wire.CreateSession)
		require.True(t, ok, "read into its type: %s", line)
		var want wire.CreateSession
		require.Nil(t, v1Decode(wire.MethodSessionsCreate, json.RawMessage(`{"sessionId":"x","title":"T","metadata":{"k":[1,2]}}`), &want))
		assert.Equal(t, want, got)
	}

	for _, tc := range []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"sessions/watch","params":{"sessionId":"a","sessionID":"b"}}`, `invalid params: "sessionID" is given twice`},
		{`{"jsonrpc":"2.0","id":1,"method":"sessions/watch","params":{"sessionId":"a","sessionId":"b"}}`, `invalid params: "sessionId" is given twice`},
		{`{"jsonrpc":"2.0","id":1,"params":{"sessionId":"a","sessionID":"b"},"method":"sessions/get"}`, `invalid params: "sessionID" is given twice`},
		{`{"jsonrpc":"2.0","id":1,"method":"sessions/create","params":{"metadata":{"a":1,"a":2},"sessionId":"a","SessionId":"b"}}`, `invalid params: "SessionId" is given twice`},
	} {
		reqs, errs, _, perr := jsonrpc.Parse([]byte(tc.line), decoders())
		require.Nil(t, perr)
		require.Empty(t, errs)
		require.Len(t, reqs, 1)
		require.NotNil(t, reqs[0].ParamsErr, tc.line)
		assert.Equal(t, wire.CodeInvalidParams, reqs[0].ParamsErr.Code)
		assert.Contains(t, reqs[0].ParamsErr.Message, tc.want)
	}
}

// FuzzOnePassParse checks the one path against encoding/json: a line is
// not JSON to it exactly when it is not to encoding/json; a request it
// reads has the envelope encoding/json reads, params equal to what
// encoding/json's strict decode makes of them (for tools/call, the
// arguments as logged and the call tools.Decode makes of them), and
// params it refuses are refused by encoding/json in the same words, or
// give a name twice.
func FuzzOnePassParse(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"sessionId":"s","name":"TaskCreate","arguments":{"subject":"a","description":"b"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"TaskUpdate","arguments":{"taskid":"3","status":"completed"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"sessions/get","params":{"sessionId":"s"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"sessions/list","params":{"status":"active","limit":10}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":5,"method":"sessions/watch","params":{"sessionId":"a","sessionID":"b"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":4,"method":"sessions/replay","params":{"sessionId":"s","calls":[{"name":"TaskCreate","arguments":{"subject":"a"}}]}}`))
	f.Add([]byte(`[{"params":{"sessionId":5},"method":"sessions/get","jsonrpc":"2.0","id":1},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":"{\"taskid\":1}","name":"TaskGet"}}]`))
	dec := decoders()
	f.Fuzz(func(t *testing.T, line []byte) {
		reqs, errs, batch, perr := jsonrpc.Parse(line, dec)
		notJSON := perr != nil && perr.Code == wire.CodeParseError
		if notJSON != !json.Valid(bytes.TrimSpace(line)) {
			t.Fatalf("%q: not JSON to the one pass: %v, to encoding/json: %v", line, notJSON, !json.Valid(line))
		}
		if perr != nil || len(errs) > 0 && errs[0].Error.Code == wire.CodeParseError {
			return
		}
		var envs []v1Envelope
		if batch {
			var elems []json.RawMessage
			if err := json.Unmarshal(line, &elems); err != nil {
				t.Fatalf("%q: a batch encoding/json cannot read: %v", line, err)
			}
			for _, e := range elems {
				var env v1Envelope
				if json.Unmarshal(e, &env) == nil && env.JSONRPC == "2.0" && env.Method != "" {
					envs = append(envs, env)
				}
			}
		} else {
			var env v1Envelope
			if json.Unmarshal(line, &env) == nil && env.JSONRPC == "2.0" && env.Method != "" {
				envs = append(envs, env)
			}
		}
		for _, r := range reqs {
			i := slicesIndex(envs, r)
			if i < 0 {
				t.Fatalf("%q: the one pass read %+v, which encoding/json does not", line, r)
			}
			env := envs[i]
			envs = append(envs[:i], envs[i+1:]...)
			if r.ParamsErr != nil {
				if strings.Contains(r.ParamsErr.Message, "given twice") {
					continue
				}
				want := reflect.New(paramsType(r.Method))
				if e := v1Decode(r.Method, env.Params, want.Interface()); e == nil || e.Message != r.ParamsErr.Message {
					t.Fatalf("%q: the one pass refused the params: %v; encoding/json: %v", line, r.ParamsErr, e)
				}
				continue
			}
			if r.Params == nil {
				continue // a method not served
			}
			v, ok := r.Params.(toolCall)
			if !ok {
				want := reflect.New(reflect.TypeOf(r.Params))
				if err := v1Decode(r.Method, env.Params, want.Interface()); err != nil {
					t.Fatalf("%q: the one pass read the params, encoding/json refused them: %v", line, err)
				}
				if !reflect.DeepEqual(want.Elem().Interface(), r.Params) {
					t.Fatalf("%q: the one pass read %+v, encoding/json %+v", line, r.Params, want.Elem().Interface())
				}
				continue
			}
			var p wire.ToolCall
			if err := v1Decode(r.Method, env.Params, &p); err != nil {
				t.Fatalf("%q: the one pass read the params, encoding/json refused them: %v", line, err)
			}
			if p.SessionID != v.SessionID || p.Name != v.Name || p.CallID != v.CallID || p.Role != v.Role ||
				string(tools.Canonical(p.Arguments)) != string(tools.Canonical(v.Arguments)) {
				t.Fatalf("%q: the one pass read %+v, encoding/json %+v", line, v.ToolCall, p)
			}
			if v.args == nil {
				if p.Name != "" {
					t.Fatalf("%q: the arguments were not decoded", line)
				}
				continue
			}
			call, callErr := tools.Decode(p.Name, tools.Canonical(p.Arguments))
			if (callErr == nil) != (v.args.Err == nil) || callErr == nil && !assert.ObjectsAreEqual(call, v.args.Call) ||
				callErr != nil && callErr.Error() != v.args.Err.Error() {
				t.Fatalf("%q: the pass decoded %+v (%v), tools.Decode %+v (%v)", line, v.args.Call, v.args.Err, call, callErr)
			}
		}
	})
}

// slicesIndex finds the envelope encoding/json read for r.
func slicesIndex(envs []v1Envelope, r jsonrpc.Request) int {
	for i, e := range envs {
		if e.Method == r.Method && string(e.ID) == string(r.ID) {
			return i
		}
	}
	return -1
}

// paramsType is the type of a served method's params.
func paramsType(method string) reflect.Type {
	if method == wire.MethodToolsCall {
		return reflect.TypeOf(wire.ToolCall{})
	}
	for _, m := range wire.Methods {
		if m.Name == method {
			return reflect.TypeOf(m.Params)
		}
	}
	return reflect.TypeOf(struct{}{})
}

// BenchmarkParseToolCall is what a tools/call line costs before it reaches
// the session's apply: the envelope, the params and the arguments, in the
// one pass, of the usual member order and of another.
func BenchmarkParseToolCall(b *testing.B) {
	const params = `{"sessionId":"01a23d72-81ce-7bbe-9e6d-0dee88c81d62","name":"TaskCreate","callId":"toolu_01A09q90qw90lq917835lq9","arguments":{"subject":"Step 4: write the parser tests","description":"Cover the error paths of the config parser: missing keys, wrong types and a file that is not UTF-8; run them under -race."}}`
	dec := decoders()
	for name, line := range map[string][]byte{
		"usual-order":  []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":` + params + `}`),
		"params-first": []byte(`{"params":` + params + `,"jsonrpc":"2.0","id":42,"method":"tools/call"}`),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				reqs, _, _, perr := jsonrpc.Parse(line, dec)
				if v, ok := reqs[0].Params.(toolCall); perr != nil || !ok || v.args == nil || v.args.Err != nil {
					b.Fatal(perr)
				}
			}
		})
	}
}
