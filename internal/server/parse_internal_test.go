package server

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// v1Decode is how params were decoded before json/v2 read them, and the
// reference their values are held to: encoding/json, strictly.
func v1Decode(params json.RawMessage, v any) error {
	params = bytes.TrimSpace(params)
	if len(params) == 0 || bytes.Equal(params, []byte("null")) {
		params = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// v1Envelope is a request as encoding/json reads it.
type v1Envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// readParams is what the method table does with a request's params before
// it serves them: read into P, strictly, or the error answered.
func readParams[P any](method string, params []byte) (P, *jsonrpc.Error) {
	var p P
	_, err := withConn(method, func(_ context.Context, _ *conn, v P) (any, error) { p = v; return nil, nil })(context.Background(), nil, params)
	e, _ := err.(*jsonrpc.Error)
	return p, e
}

func TestToolCallIsReadOnce(t *testing.T) {
	// Ensures a tools/call line of any shape is read once — the envelope,
	// then the params into wire.ToolCall — to what encoding/json makes of
	// them, its arguments as logged and the call tools.Decode makes of
	// them; and that what cannot be read is answered: params of the wrong
	// shape (in json/v2's words since issue 44), a name given twice, text
	// JSON cannot carry.
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
		{"SessionIDNotAString", `{"sessionId":5,"name":"TaskList"}`, `-32602 invalid params for tools/call: sessionId must be a string, got a number`},
		{"ParamsArray", `[1]`, `-32602 invalid params for tools/call: the params must be an object, got an array`},
		{"ParamGivenTwice", `{"sessionId":"s","sessionId":"t","name":"TaskList"}`, `-32602 invalid params: "sessionId" is given twice; give each member once`},
		{"ParamGivenTwiceInAnotherCase", `{"sessionId":"s","SESSIONID":"t","name":"TaskList"}`, `-32602 invalid params: "SESSIONID" is given twice; give each member once`},
		{"NotUTF8", "{\"sessionId\":\"s\",\"name\":\"TaskCreate\",\"arguments\":{\"subject\":\"\xff\"}}", `-32700 parse error: the line is not valid JSON: invalid UTF-8 within "/params/arguments/subject" after offset 116`},
		{"LoneSurrogate", `{"sessionId":"s","name":"TaskCreate","arguments":{"subject":"\ud800"}}`, "-32700 parse error: the line is not valid JSON: invalid surrogate pair `\\ud800"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := []byte(head + tc.params + "}")
			reqs, errs, _, perr := jsonrpc.Parse(line, 0)
			require.Nil(t, perr)
			var got *jsonrpc.Error
			var p wire.ToolCall
			switch {
			case len(errs) > 0:
				require.Empty(t, reqs)
				require.Len(t, errs, 1)
				assert.Equal(t, "7", string(errs[0].ID))
				got = errs[0].Error
			default:
				require.Len(t, reqs, 1)
				p, got = readParams[wire.ToolCall](reqs[0].Method, reqs[0].Params)
			}
			if tc.want != "" {
				require.NotNil(t, got, "refused")
				code, msg, _ := strings.Cut(tc.want, " ")
				assert.Equal(t, code, strconv.FormatInt(got.Code, 10))
				assert.Contains(t, got.Message, msg)
				return
			}
			require.Nil(t, got)
			var want wire.ToolCall
			require.NoError(t, v1Decode(json.RawMessage(tc.params), &want))
			assert.Equal(t, want.SessionID, p.SessionID)
			assert.Equal(t, want.Name, p.Name)
			assert.Equal(t, want.CallID, p.CallID)
			assert.Equal(t, want.Role, p.Role)
			assert.Equal(t, string(tools.Canonical(want.Arguments)), string(tools.Canonical(p.Arguments)), "arguments as logged")
		})
	}
}

func TestParamsOfOtherMethodsAreReadOnce(t *testing.T) {
	// Ensures every other method has its params read into its own type, to
	// what encoding/json made of them, whatever the order of the
	// envelope's members; and that a name given twice in the params, in
	// any case (encoding/json would read "sessionID" over "sessionId"),
	// is refused.
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":"a","method":"sessions/create","params":{"sessionId":"x","title":"T","metadata":{"k":[1,2]}}}`,
		`{"params":{"sessionId":"x","title":"T","metadata":{"k":[1,2]}},"id":"a","method":"sessions/create","jsonrpc":"2.0"}`,
		`[{"jsonrpc":"2.0","id":"a","params":{"sessionId":"x","title":"T","metadata":{"k":[1,2]}},"method":"sessions/create"}]`,
	} {
		reqs, errs, _, perr := jsonrpc.Parse([]byte(line), 0)
		require.Nil(t, perr)
		require.Empty(t, errs)
		require.Len(t, reqs, 1)
		got, e := readParams[wire.CreateSession](reqs[0].Method, reqs[0].Params)
		require.Nil(t, e)
		var want wire.CreateSession
		require.NoError(t, v1Decode(json.RawMessage(`{"sessionId":"x","title":"T","metadata":{"k":[1,2]}}`), &want))
		assert.Equal(t, want, got)
	}

	for _, tc := range []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"sessions/watch","params":{"sessionId":"a","sessionID":"b"}}`, `invalid params: "sessionID" is given twice`},
		{`{"jsonrpc":"2.0","id":1,"method":"sessions/watch","params":{"sessionId":"a","sessionId":"b"}}`, `invalid params: "sessionId" is given twice`},
		{`{"jsonrpc":"2.0","id":1,"params":{"sessionId":"a","sessionID":"b"},"method":"sessions/get"}`, `invalid params: "sessionID" is given twice`},
		{`{"jsonrpc":"2.0","id":1,"method":"sessions/create","params":{"metadata":{"a":1,"a":2},"sessionId":"a","SessionId":"b"}}`, `invalid params: "SessionId" is given twice`},
	} {
		reqs, errs, _, perr := jsonrpc.Parse([]byte(tc.line), 0)
		require.Nil(t, perr)
		require.Empty(t, errs)
		require.Len(t, reqs, 1)
		_, e := readParams[wire.CreateSession](reqs[0].Method, reqs[0].Params)
		require.NotNil(t, e, tc.line)
		assert.Equal(t, wire.CodeInvalidParams, e.Code)
		assert.Contains(t, e.Message, tc.want)
	}
}

// FuzzOnePassParse checks the one path against encoding/json: a line is
// not JSON to it exactly when it is not to encoding/json; a request it
// reads has the envelope encoding/json reads, and params it reads into
// their type are what encoding/json's strict decode makes of them (a
// tools/call's arguments as logged and as tools.Decode reads them).
func FuzzOnePassParse(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"sessionId":"s","name":"TaskCreate","arguments":{"subject":"a","description":"b"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"TaskUpdate","arguments":{"taskid":"3","status":"completed"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"sessions/get","params":{"sessionId":"s"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"sessions/list","params":{"status":"active","limit":10}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":5,"method":"sessions/watch","params":{"sessionId":"a","sessionID":"b"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":4,"method":"sessions/replay","params":{"sessionId":"s","calls":[{"name":"TaskCreate","arguments":{"subject":"a"}}]}}`))
	f.Add([]byte(`[{"params":{"sessionId":5},"method":"sessions/get","jsonrpc":"2.0","id":1},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":"{\"taskid\":1}","name":"TaskGet"}}]`))
	f.Fuzz(func(t *testing.T, line []byte) {
		reqs, errs, batch, perr := jsonrpc.Parse(line, 0)
		notJSON := perr != nil && perr.Code == wire.CodeParseError
		if notJSON != !json.Valid(bytes.TrimSpace(line)) {
			t.Fatalf("%q: not JSON to the one pass: %v, to encoding/json: %v", line, notJSON, !json.Valid(line))
		}
		if perr != nil || len(errs) > 0 && errs[0].Error.Code == wire.CodeParseError {
			return
		}
		var envs []v1Envelope
		var elems []json.RawMessage
		if !batch {
			elems = []json.RawMessage{line}
		} else if err := json.Unmarshal(line, &elems); err != nil {
			t.Fatalf("%q: a batch encoding/json cannot read: %v", line, err)
		}
		for _, e := range elems {
			var env v1Envelope
			if json.Unmarshal(e, &env) == nil && env.JSONRPC == "2.0" && env.Method != "" {
				envs = append(envs, env)
			}
		}
		for _, r := range reqs {
			i := -1
			for j, e := range envs {
				if e.Method == r.Method && string(e.ID) == string(r.ID) {
					i = j
				}
			}
			if i < 0 {
				t.Fatalf("%q: the one pass read %+v, which encoding/json does not", line, r)
			}
			env := envs[i]
			envs = append(envs[:i], envs[i+1:]...)
			typ := paramsType(r.Method)
			if typ == nil || len(r.Params) == 0 || r.Params[0] == 'n' {
				continue
			}
			got := reflect.New(typ)
			twice, err := jsonrpc.Unmarshal(r.Params, got.Interface(), jsonv2.RejectUnknownMembers(true))
			want := reflect.New(typ)
			v1err := v1Decode(env.Params, want.Interface())
			switch {
			case twice != "":
			case err != nil && v1err == nil:
				t.Fatalf("%q: json/v2 refused the params (%v), encoding/json read them", line, err)
			case err == nil && v1err != nil:
				t.Fatalf("%q: json/v2 read the params, encoding/json refused them: %v", line, v1err)
			case err == nil && !reflect.DeepEqual(want.Elem().Interface(), got.Elem().Interface()):
				t.Fatalf("%q: json/v2 read %+v, encoding/json %+v", line, got.Elem().Interface(), want.Elem().Interface())
			}
			if p, ok := got.Elem().Interface().(wire.ToolCall); ok && err == nil && twice == "" && p.Name != "" {
				tools.Decode(p.Name, tools.Canonical(p.Arguments), tools.Live)
			}
		}
	})
}

// paramsType is the type of a served method's params, nil for another.
func paramsType(method string) reflect.Type {
	if method == wire.MethodToolsCall {
		return reflect.TypeOf(wire.ToolCall{})
	}
	for _, m := range wire.Methods {
		if m.Name == method && m.Params != nil {
			return reflect.TypeOf(m.Params)
		}
	}
	return nil
}

// BenchmarkParseToolCall is what a tools/call line costs before it reaches
// the session's apply: the envelope, the params, and the arguments as
// logged and decoded, of the usual member order and of another.
func BenchmarkParseToolCall(b *testing.B) {
	const params = `{"sessionId":"01a23d72-81ce-7bbe-9e6d-0dee88c81d62","name":"TaskCreate","callId":"toolu_01A09q90qw90lq917835lq9","arguments":{"subject":"Step 4: write the parser tests","description":"Cover the error paths of the config parser: missing keys, wrong types and a file that is not UTF-8; run them under -race."}}`
	for name, line := range map[string][]byte{
		"usual-order":  []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":` + params + `}`),
		"params-first": []byte(`{"params":` + params + `,"jsonrpc":"2.0","id":42,"method":"tools/call"}`),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				reqs, _, _, perr := jsonrpc.Parse(line, 0)
				var p wire.ToolCall
				twice, err := jsonrpc.Unmarshal(reqs[0].Params, &p, jsonv2.RejectUnknownMembers(true))
				if perr != nil || err != nil || twice != "" {
					b.Fatal(perr, err)
				}
				if _, _, err := tools.Decode(p.Name, tools.Canonical(p.Arguments), tools.Live); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
