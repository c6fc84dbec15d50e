package tools_test

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

// Gemini CLI adds wait_for_previous to every tool's schema, tells the
// model to set it, and passes it on with the call: it must not fail one.
func TestDecodeIgnoresHostArguments(t *testing.T) {
	for _, tc := range []struct {
		tool, args string
		want       tools.Call
	}{
		{tools.TaskCreate, `{"subject":"a","wait_for_previous":true}`, tools.Call{Name: tools.TaskCreate, Change: tasksessiond.Change{Subject: ptr("a"), Description: ptr("")}}},
		{tools.TaskList, `{"wait_for_previous":false}`, tools.Call{Name: tools.TaskList}},
		{tools.TaskGet, `{"taskid":"#2","wait_for_previous":true}`, tools.Call{Name: tools.TaskGet, Change: tasksessiond.Change{Taskid: 2}}},
		{tools.TaskUpdate, `{"wait_for_previous":true,"taskid":"2","status":"in_progress"}`, tools.Call{Name: tools.TaskUpdate, Change: tasksessiond.Change{Taskid: 2, Status: tasksessiond.InProgress}}},
	} {
		got, _, err := tools.Decode(tc.tool, json.RawMessage(tc.args), tools.Live)
		require.NoError(t, err, tc.args)
		assert.Equal(t, tc.want, got, tc.args)
	}
	// It is no argument of ours: alone it changes nothing.
	_, _, err := tools.Decode(tools.TaskUpdate, json.RawMessage(`{"taskid":1,"wait_for_previous":true}`), tools.Live)
	assert.ErrorContains(t, err, "nothing to change")
	_, _, err = tools.Decode(tools.TaskList, json.RawMessage(`{"wait_for_previous":true,"zz":1}`), tools.Live)
	assert.ErrorContains(t, err, `unknown argument "zz"; TaskList takes no arguments`)
}

// A host that checks a call against the input schema before sending it
// (Gemini CLI, with the schema plus its wait_for_previous) must let through
// every call the decoder takes; the schema still refuses what no decoding
// could mend.
func TestSchemasAdmitWhatTheDecoderTakes(t *testing.T) {
	resolved := map[string]*jsonschema.Resolved{}
	for _, d := range tools.Defs(tools.RoleAgent) {
		var s map[string]any
		require.NoError(t, json.Unmarshal(d.InputSchema, &s))
		// What Gemini CLI's addWaitForPreviousParameter does.
		s["properties"].(map[string]any)["wait_for_previous"] = map[string]any{"type": "boolean"}
		raw, err := json.Marshal(s)
		require.NoError(t, err)
		var schema jsonschema.Schema
		require.NoError(t, json.Unmarshal(raw, &schema))
		r, err := schema.Resolve(nil)
		require.NoError(t, err, d.Name)
		resolved[d.Name] = r
	}
	check := func(tool, args string) error {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(args), &v))
		return resolved[tool].Validate(v)
	}
	for _, tc := range []struct{ tool, args string }{
		{tools.TaskCreate, `{"subject":"a","description":"b","wait_for_previous":true}`},
		{tools.TaskList, `{"wait_for_previous":false}`},
		{tools.TaskList, `{}`},
		{tools.TaskGet, `{"taskid":2}`},
		{tools.TaskGet, `{"taskid":"2","wait_for_previous":true}`},
		{tools.TaskGet, `{"taskid":"#2"}`},
		{tools.TaskGet, `{"taskid":" #12 "}`},
		{tools.TaskUpdate, `{"taskid":"#2","status":"in_progress","wait_for_previous":true}`},
		{tools.TaskUpdate, `{"taskid":2,"status":"in-progress"}`},
		{tools.TaskUpdate, `{"taskid":2,"status":"inprogress"}`},
		{tools.TaskUpdate, `{"taskid":2,"status":"completed","subject":"s","description":""}`},
	} {
		_, _, err := tools.Decode(tc.tool, json.RawMessage(tc.args), tools.Live)
		require.NoError(t, err, "decoder: %s %s", tc.tool, tc.args)
		assert.NoError(t, check(tc.tool, tc.args), "schema: %s %s", tc.tool, tc.args)
	}
	for _, tc := range []struct{ tool, args string }{
		{tools.TaskGet, `{"taskid":"two"}`},
		{tools.TaskGet, `{"taskid":true}`},
		{tools.TaskUpdate, `{"taskid":1,"status":"done"}`},
	} {
		_, _, err := tools.Decode(tc.tool, json.RawMessage(tc.args), tools.Live)
		require.Error(t, err, "decoder: %s %s", tc.tool, tc.args)
		assert.Error(t, check(tc.tool, tc.args), "schema: %s %s", tc.tool, tc.args)
	}
	// A taskid under 1 passes the schema (its bytes go with every request)
	// and is refused by the decoder, which says what a taskid is.
	_, _, err := tools.Decode(tools.TaskGet, json.RawMessage(`{"taskid":0}`), tools.Live)
	assert.ErrorContains(t, err, "taskid must be a positive integer")
	// An argument the schema does not name passes it (additionalProperties
	// costs every request its bytes) and is refused by the decoder, which
	// says which it takes.
	_, _, err = tools.Decode(tools.TaskCreate, json.RawMessage(`{"subject":"a","zz":1}`), tools.Live)
	assert.ErrorContains(t, err, `unknown argument "zz"`)
}
