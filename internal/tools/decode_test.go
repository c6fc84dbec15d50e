package tools_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

func ptr[T any](v T) *T { return &v }

func TestDecodeOK(t *testing.T) {
	for _, tc := range []struct {
		name, tool, args string
		want             tools.Call
	}{
		{"CreateSubjectOnly", tools.TaskCreate, `{"subject":"Write tests"}`, tools.Call{Name: tools.TaskCreate, Change: tasksessiond.Change{Subject: ptr("Write tests"), Description: ptr("")}}},
		{"CreateTrimsSubject", tools.TaskCreate, `{"subject":"  Write tests \t","description":" keep \n as is "}`, tools.Call{Name: tools.TaskCreate, Change: tasksessiond.Change{Subject: ptr("Write tests"), Description: ptr(" keep \n as is ")}}},
		{"CreateNullDescription", tools.TaskCreate, `{"subject":"a","description":null}`, tools.Call{Name: tools.TaskCreate, Change: tasksessiond.Change{Subject: ptr("a"), Description: ptr("")}}},
		{"CreateArgumentsAsString", tools.TaskCreate, `"{\"subject\":\"a\"}"`, tools.Call{Name: tools.TaskCreate, Change: tasksessiond.Change{Subject: ptr("a"), Description: ptr("")}}},
		{"ListEmptyObject", tools.TaskList, `{}`, tools.Call{Name: tools.TaskList}},
		{"ListAbsent", tools.TaskList, ``, tools.Call{Name: tools.TaskList}},
		{"ListNull", tools.TaskList, `null`, tools.Call{Name: tools.TaskList}},
		{"ListEmptyString", tools.TaskList, `""`, tools.Call{Name: tools.TaskList}},
		{"GetInteger", tools.TaskGet, `{"taskid":3}`, tools.Call{Name: tools.TaskGet, Change: tasksessiond.Change{Taskid: 3}}},
		{"GetDigitString", tools.TaskGet, `{"taskid":"3"}`, tools.Call{Name: tools.TaskGet, Change: tasksessiond.Change{Taskid: 3}}},
		{"GetHashString", tools.TaskGet, `{"taskid":"#12"}`, tools.Call{Name: tools.TaskGet, Change: tasksessiond.Change{Taskid: 12}}},
		{"GetIntegralFloat", tools.TaskGet, `{"taskid":3.0}`, tools.Call{Name: tools.TaskGet, Change: tasksessiond.Change{Taskid: 3}}},
		{"UpdateStatus", tools.TaskUpdate, `{"taskid":1,"status":"completed"}`, tools.Call{Name: tools.TaskUpdate, Change: tasksessiond.Change{Taskid: 1, Status: tasksessiond.Completed}}},
		{"UpdateAliasUnderscore", tools.TaskUpdate, `{"taskid":1,"status":"in_progress"}`, tools.Call{Name: tools.TaskUpdate, Change: tasksessiond.Change{Taskid: 1, Status: tasksessiond.InProgress}}},
		{"UpdateAliasHyphen", tools.TaskUpdate, `{"taskid":1,"status":"in-progress"}`, tools.Call{Name: tools.TaskUpdate, Change: tasksessiond.Change{Taskid: 1, Status: tasksessiond.InProgress}}},
		{"UpdateDeleted", tools.TaskUpdate, `{"taskid":1,"status":"deleted"}`, tools.Call{Name: tools.TaskUpdate, Change: tasksessiond.Change{Taskid: 1, Status: tasksessiond.Deleted}}},
		{"UpdateSubject", tools.TaskUpdate, `{"taskid":"#2","subject":"b"}`, tools.Call{Name: tools.TaskUpdate, Change: tasksessiond.Change{Taskid: 2, Subject: ptr("b")}}},
		{"UpdateEmptyDescription", tools.TaskUpdate, `{"taskid":2,"description":""}`, tools.Call{Name: tools.TaskUpdate, Change: tasksessiond.Change{Taskid: 2, Description: ptr("")}}},
		{"UpdateNullsAreAbsent", tools.TaskUpdate, `{"taskid":2,"status":null,"subject":null,"description":"d"}`, tools.Call{Name: tools.TaskUpdate, Change: tasksessiond.Change{Taskid: 2, Description: ptr("d")}}},
		{"DescriptionAtLimitInCharacters", tools.TaskCreate, `{"subject":"a","description":"` + strings.Repeat("é", tools.MaxDescriptionRunes) + `"}`, tools.Call{Name: tools.TaskCreate, Change: tasksessiond.Change{Subject: ptr("a"), Description: ptr(strings.Repeat("é", tools.MaxDescriptionRunes))}}},
		{"SameKeyNested", tools.TaskCreate, `{"subject":"a:{\"b\":1}","description":"x"}`, tools.Call{Name: tools.TaskCreate, Change: tasksessiond.Change{Subject: ptr(`a:{"b":1}`), Description: ptr("x")}}},
		{"SubjectAtLimit", tools.TaskCreate, `{"subject":"` + strings.Repeat("é", tools.MaxSubjectRunes) + `"}`, tools.Call{Name: tools.TaskCreate, Change: tasksessiond.Change{Subject: ptr(strings.Repeat("é", tools.MaxSubjectRunes)), Description: ptr("")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := tools.Decode(tc.tool, json.RawMessage(tc.args), tools.Live)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	bigDesc := `"` + strings.Repeat("x", tools.MaxDescriptionRunes+1) + `"`
	for _, tc := range []struct {
		name, tool, args string
		want             string // a part of the message the model sees
	}{
		{"CreateNoSubject", tools.TaskCreate, `{}`, "subject is required"},
		{"CreateNullSubject", tools.TaskCreate, `{"subject":null}`, "subject is required"},
		{"CreateStringHoldingNull", tools.TaskCreate, `" null "`, "subject is required"},
		{"UpdateStringHoldingNull", tools.TaskUpdate, `"null"`, "taskid is required"},
		{"CreateEmptySubject", tools.TaskCreate, `{"subject":"   "}`, "subject must not be empty"},
		{"CreateMultilineSubject", tools.TaskCreate, `{"subject":"a\nb"}`, "subject must be one line"},
		{"CreateCRSubject", tools.TaskCreate, `{"subject":"a\rb"}`, "subject must be one line"},
		{"CreateControlInSubject", tools.TaskCreate, `{"subject":"a\u0000b"}`, "control characters"},
		{"CreateLongSubject", tools.TaskCreate, `{"subject":"` + strings.Repeat("a", tools.MaxSubjectRunes+1) + `"}`, "the limit is 500"},
		{"CreateSubjectNotString", tools.TaskCreate, `{"subject":5}`, "subject must be a string, got a number"},
		{"CreateDescriptionNotString", tools.TaskCreate, `{"subject":"a","description":["x"]}`, "description must be a string, got an array"},
		{"CreateLongDescription", tools.TaskCreate, `{"subject":"a","description":` + bigDesc + `}`, "the limit is 16000"},
		{"CreateNULInDescription", tools.TaskCreate, `{"subject":"a","description":"x\u0000"}`, "NUL"},
		{"CreateDuplicateSubject", tools.TaskCreate, `{"subject":"a","subject":"b"}`, `argument "subject" is given twice`},
		{"UpdateDuplicateTaskid", tools.TaskUpdate, `{"taskid":1,"status":"completed","taskid":2}`, `argument "taskid" is given twice`},
		{"DuplicateInsideString", tools.TaskCreate, `"{\"subject\":\"a\",\"subject\":\"b\"}"`, `argument "subject" is given twice`},
		{"CreateLongDescriptionInCharacters", tools.TaskCreate, `{"subject":"a","description":"` + strings.Repeat("é", tools.MaxDescriptionRunes+1) + `"}`, "description is 16001 characters, the limit is 16000"},
		{"CreateUnknownArgument", tools.TaskCreate, `{"subject":"a","priority":1}`, `unknown argument "priority"; TaskCreate takes: subject, description`},
		{"CreateTaskidNotTaken", tools.TaskCreate, `{"subject":"a","taskid":7}`, `unknown argument "taskid"; TaskCreate takes: subject, description`},
		{"CreateStatusNotTaken", tools.TaskCreate, `{"subject":"a","status":"completed"}`, `unknown argument "status"`},
		{"ArgumentsArray", tools.TaskCreate, `[1]`, "arguments must be a JSON object, got an array"},
		{"ArgumentsNumber", tools.TaskList, `3`, "arguments must be a JSON object, got a number"},
		{"ArgumentsBadString", tools.TaskCreate, `"{subject: a}"`, "the string given does not hold valid JSON"},
		{"ListUnknownArguments", tools.TaskList, `{"b":1,"a":2}`, `unknown arguments "a", "b"; TaskList takes no arguments`},
		{"GetNoTaskid", tools.TaskGet, `{}`, "taskid is required"},
		{"GetZero", tools.TaskGet, `{"taskid":0}`, "taskid must be a positive integer"},
		{"GetNegative", tools.TaskGet, `{"taskid":-2}`, "taskid must be a positive integer"},
		{"GetFraction", tools.TaskGet, `{"taskid":1.5}`, "taskid must be a positive integer"},
		{"GetWord", tools.TaskGet, `{"taskid":"three"}`, "taskid must be a positive integer"},
		{"GetHashOnly", tools.TaskGet, `{"taskid":"#"}`, "taskid must be a positive integer"},
		{"GetBool", tools.TaskGet, `{"taskid":true}`, "got a boolean"},
		{"GetNull", tools.TaskGet, `{"taskid":null}`, "taskid is required"},
		{"GetHuge", tools.TaskGet, `{"taskid":99999999999999999999}`, "taskid must be a positive integer"},
		{"GetUnknownArgument", tools.TaskGet, `{"taskid":1,"verbose":true}`, `unknown argument "verbose"; TaskGet takes: taskid`},
		{"UpdateNothing", tools.TaskUpdate, `{"taskid":1}`, "nothing to change"},
		{"UpdateOnlyNulls", tools.TaskUpdate, `{"taskid":1,"status":null}`, "nothing to change"},
		{"UpdateNoTaskid", tools.TaskUpdate, `{"status":"completed"}`, "taskid is required"},
		{"UpdateBadStatus", tools.TaskUpdate, `{"taskid":1,"status":"done"}`, `status must be one of pending, inprogress, completed, deleted; got "done"`},
		{"UpdateStatusNotString", tools.TaskUpdate, `{"taskid":1,"status":2}`, "status must be a string"},
		{"UpdateEmptySubject", tools.TaskUpdate, `{"taskid":1,"subject":""}`, "subject must not be empty"},
		{"UpdateMultilineSubject", tools.TaskUpdate, `{"taskid":1,"subject":"a\nb"}`, "one line"},
		{"UpdateLongDescription", tools.TaskUpdate, `{"taskid":1,"description":` + bigDesc + `}`, "the limit is 16000"},
		{"UpdateChangeTaskid", tools.TaskUpdate, `{"taskid":1,"newTaskid":2}`, "the taskid identifies the task and cannot be changed"},
		{"UpdateChangeID", tools.TaskUpdate, `{"taskid":1,"id":2}`, "cannot be changed"},
		{"UpdateUnknownArgument", tools.TaskUpdate, `{"taskid":1,"priority":"high"}`, `unknown argument "priority"; TaskUpdate takes: taskid, status, subject, description`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := tools.Decode(tc.tool, json.RawMessage(tc.args), tools.Live)
			var ae *tools.ArgError
			require.ErrorAs(t, err, &ae)
			assert.Contains(t, ae.Msg, tc.want)
			assert.Equal(t, tc.tool, ae.Tool)
		})
	}
}

// A string of arguments whose own text JSON cannot carry (a hand-edited
// log row, say) is refused with the decoder's account, live or logged,
// even where the text read leniently would hold an object; and so is a
// string holding a string (unwrapped once, it holds JSON that is no object).
func TestDecodeStringOfBadText(t *testing.T) {
	for name, raw := range map[string]string{
		"OuterNotUTF8":          "\"{\\\"subject\\\":\\\"a\xff\\\"}\"",
		"OuterLoneSurrogate":    `"{\"subject\":\"\ud800\"}"`,
		"InnerLoneSurrogate":    `"{\"subject\":\"\\ud800\"}"`,
		"InnerNotJSON":          `"{subject: a}"`,
		"StringOfAnEmptyObject": `"\"{}\""`,
		"StringOfAString":       `"\"x\""`,
		"StringOfANumber":       `"\"0\""`,
		"StringOfAnArray":       `"\"[]\""`,
		"StringOfArguments":     `"\"{\\\"subject\\\":\\\"a\\\"}\""`,
	} {
		for _, rules := range []tools.Rules{tools.Live, tools.Logged} {
			t.Run(name, func(t *testing.T) {
				_, _, err := tools.Decode(tools.TaskCreate, json.RawMessage(raw), rules)
				var ae *tools.ArgError
				require.ErrorAs(t, err, &ae)
				assert.Regexp(t, "valid JSON|got a string holding", ae.Msg)
			})
		}
	}
}

func TestDecodeUnknownTool(t *testing.T) {
	// Ensures an unknown tool is a protocol error naming the real tools, not an ArgError.
	_, _, err := tools.Decode("TaskDelete", json.RawMessage(`{}`), tools.Live)
	require.ErrorIs(t, err, tools.ErrUnknownTool)
	assert.Contains(t, err.Error(), "TaskCreate, TaskList, TaskGet, TaskUpdate")
	var ae *tools.ArgError
	assert.False(t, errors.As(err, &ae))
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		``:               `{}`,
		`null`:           `{}`,
		`""`:             `{}`,
		`{ "a" : 1 }`:    `{"a":1}`,
		`"{ \"a\": 1 }"`: `{"a":1}`,
		`"not json"`:     `"not json"`,
		`[1, 2]`:         `[1,2]`,
	} {
		assert.Equal(t, want, string(tools.Canonical(json.RawMessage(in))), "Canonical(%s)", in)
	}
}
