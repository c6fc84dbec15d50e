package tools_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

func mustDecode(t *testing.T, tool, args string) tools.Call {
	t.Helper()
	c, _, err := tools.Decode(tool, json.RawMessage(args), tools.Live)
	require.NoError(t, err)
	return c
}

func TestExecuteCreate(t *testing.T) {
	// Ensures TaskCreate appends a pending task, returns it and an overview of the store.
	st := store.New()
	tools.Execute(st, mustDecode(t, tools.TaskCreate, `{"subject":"First"}`))
	res, changed := tools.Execute(st, mustDecode(t, tools.TaskCreate, `{"subject":"Second","description":"d"}`))
	require.False(t, res.IsError)
	want := tasksessiond.Task{Taskid: 2, Status: tasksessiond.Pending, Subject: "Second", Description: "d"}
	assert.Equal(t, &want, changed)
	assert.Equal(t, wire.Written{
		Task:     wire.Brief{Taskid: 2, Status: tasksessiond.Pending, Subject: "Second"},
		Overview: wire.Overview{Counts: tasksessiond.Counts{Total: 2, Pending: 2}},
	}, res.StructuredContent)
	assert.Equal(t, "#2 pending: Second\n2 pending", res.Text(), "the task written, then the counts: not the description the model has just written")
}

func TestExecuteUpdate(t *testing.T) {
	st := store.New()
	tools.Execute(st, mustDecode(t, tools.TaskCreate, `{"subject":"A"}`))
	tools.Execute(st, mustDecode(t, tools.TaskCreate, `{"subject":"B"}`))

	res, changed := tools.Execute(st, mustDecode(t, tools.TaskUpdate, `{"taskid":1,"status":"completed"}`))
	require.False(t, res.IsError)
	assert.Equal(t, tasksessiond.Completed, changed.Status)
	assert.Equal(t, "#1 completed: A\n1 pending, 1 completed", res.Text())

	res, _ = tools.Execute(st, mustDecode(t, tools.TaskUpdate, `{"taskid":2,"status":"in_progress"}`))
	assert.Equal(t, "#2 inprogress: B\ninprogress #2, 1 completed", res.Text(), "what is in progress, by id")
	assert.Equal(t, []int{2}, res.StructuredContent.(wire.Written).InProgress)

	res, _ = tools.Execute(st, mustDecode(t, tools.TaskUpdate, `{"taskid":2,"status":"deleted"}`))
	assert.Equal(t, "#2 deleted: B\n1 completed, 1 deleted", res.Text())
	assert.Equal(t, 2, st.Len(), "deletion keeps the task")

	res, _ = tools.Execute(st, mustDecode(t, tools.TaskUpdate, `{"taskid":2,"subject":"B2"}`))
	assert.Equal(t, "#2 deleted: B2\n1 completed, 1 deleted", res.Text(), "the subject as written")
}

func TestExecuteNotFound(t *testing.T) {
	// Ensures an unknown taskid is an error result that changes nothing and tells the model the valid range.
	st := store.New()
	res, changed := tools.Execute(st, mustDecode(t, tools.TaskGet, `{"taskid":1}`))
	assert.True(t, res.IsError)
	assert.Nil(t, changed)
	assert.Contains(t, res.Text(), "the task list is empty")

	tools.Execute(st, mustDecode(t, tools.TaskCreate, `{"subject":"A"}`))
	before := st.Snapshot()
	res, changed = tools.Execute(st, mustDecode(t, tools.TaskUpdate, `{"taskid":5,"status":"completed"}`))
	assert.True(t, res.IsError)
	assert.Nil(t, changed)
	assert.Nil(t, res.StructuredContent)
	assert.Equal(t, "Error: no task has taskid 5; taskids run from 1 to 1 (call TaskList to see them)", res.Text())
	assert.Equal(t, before, st.Snapshot())
}

func TestExecuteListAndGet(t *testing.T) {
	// Ensures TaskList shows every task, completed and deleted included, in taskid order.
	st := store.New()
	res, _ := tools.Execute(st, mustDecode(t, tools.TaskList, `{}`))
	assert.Equal(t, wire.Listing{Tasks: []tasksessiond.Task{}}, res.StructuredContent)
	assert.Contains(t, res.Text(), "empty")

	for _, s := range []string{"A", "B", "C"} {
		tools.Execute(st, mustDecode(t, tools.TaskCreate, `{"subject":"`+s+`","description":"about `+s+`\nline 2"}`))
	}
	tools.Execute(st, mustDecode(t, tools.TaskUpdate, `{"taskid":1,"status":"completed"}`))
	tools.Execute(st, mustDecode(t, tools.TaskUpdate, `{"taskid":2,"status":"deleted"}`))

	res, _ = tools.Execute(st, mustDecode(t, tools.TaskList, `{}`))
	listed := res.StructuredContent.(wire.Listing).Tasks
	require.Len(t, listed, 3)
	assert.Equal(t, []int{1, 2, 3}, []int{listed[0].Taskid, listed[1].Taskid, listed[2].Taskid}, "the store's order, whatever the status")
	assert.Equal(t, "Tasks: 1 pending, 1 completed, 1 deleted.\n\n"+
		"#1 [completed] A\n\tabout A\n\tline 2\n"+
		"#2 [deleted] B\n\tabout B\n\tline 2\n"+
		"#3 [pending] C\n\tabout C\n\tline 2", res.Text())

	res, _ = tools.Execute(st, mustDecode(t, tools.TaskGet, `{"taskid":"#2"}`))
	assert.Equal(t, wire.Got{Task: tasksessiond.Task{Taskid: 2, Status: tasksessiond.Deleted, Subject: "B", Description: "about B\nline 2"},
		Counts: tasksessiond.Counts{Total: 3, Pending: 1, Completed: 1, Deleted: 1}}, res.StructuredContent)
	assert.Equal(t, "#2 [deleted] B\n\tabout B\n\tline 2", res.Text())
}

func TestResultJSON(t *testing.T) {
	// Ensures results have the MCP CallToolResult shape.
	st := store.New()
	res, _ := tools.Execute(st, mustDecode(t, tools.TaskCreate, `{"subject":"A"}`))
	b, err := json.Marshal(res)
	require.NoError(t, err)
	assert.JSONEq(t, `{"content":[{"type":"text","text":`+mustJSON(res.Text())+`}],
		"structuredContent":{"task":{"taskid":1,"status":"pending","subject":"A"},
		"counts":{"total":1,"pending":1,"inprogress":0,"completed":0,"deleted":0}},"isError":false}`, string(b))

	res, _ = tools.Execute(store.New(), mustDecode(t, tools.TaskList, `{}`))
	b, _ = json.Marshal(res)
	assert.Contains(t, string(b), `"tasks":[]`, "an empty list is [], not absent")

	b, _ = json.Marshal(tools.ErrorResult("bad"))
	assert.JSONEq(t, `{"content":[{"type":"text","text":"Error: bad"}],"isError":true}`, string(b))
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestToolList(t *testing.T) {
	for _, tc := range []struct {
		format   tools.Format
		nameKey  func(m map[string]any) any
		schemaAt func(m map[string]any) any
	}{
		{tools.FormatMCP, func(m map[string]any) any { return m["name"] }, func(m map[string]any) any { return m["inputSchema"] }},
		{tools.FormatAnthropic, func(m map[string]any) any { return m["name"] }, func(m map[string]any) any { return m["input_schema"] }},
		{tools.FormatOpenAI, func(m map[string]any) any { return m["function"].(map[string]any)["name"] }, func(m map[string]any) any { return m["function"].(map[string]any)["parameters"] }},
	} {
		t.Run(string(tc.format), func(t *testing.T) {
			b, err := json.Marshal(tools.Render(tools.Defs(tools.RoleAgent), tc.format))
			require.NoError(t, err)
			var list []map[string]any
			require.NoError(t, json.Unmarshal(b, &list))
			require.Len(t, list, 4)
			var names []any
			for _, m := range list {
				names = append(names, tc.nameKey(m))
				schema := tc.schemaAt(m).(map[string]any)
				assert.Equal(t, "object", schema["type"])
				assert.NotContains(t, schema, "$schema", "sent to the model with every request: no byte it does not need")
				if tc.format == tools.FormatOpenAI {
					assert.Equal(t, "function", m["type"])
				}
			}
			assert.Equal(t, []any{"TaskCreate", "TaskList", "TaskGet", "TaskUpdate"}, names)
		})
	}
	t.Run("CompactWorkerReadsOnly", func(t *testing.T) {
		var names []string
		for _, d := range tools.Defs(tools.RoleCompactWorker) {
			names = append(names, d.Name)
		}
		assert.Equal(t, []string{"TaskList", "TaskGet"}, names)
	})
	t.Run("SchemasMatchDecoder", func(t *testing.T) {
		// Ensures each schema's properties are exactly the arguments the decoder takes.
		for _, d := range tools.Defs(tools.RoleAgent) {
			var s struct {
				Properties map[string]any `json:"properties"`
			}
			require.NoError(t, json.Unmarshal(d.InputSchema, &s))
			for p := range s.Properties {
				_, _, err := tools.Decode(d.Name, json.RawMessage(`{"`+p+`":{}}`), tools.Live)
				if err != nil {
					assert.NotContains(t, err.Error(), "unknown argument", "%s.%s", d.Name, p)
				}
			}
			_, _, err := tools.Decode(d.Name, json.RawMessage(`{"zz":1}`), tools.Live)
			assert.ErrorContains(t, err, `unknown argument "zz"`)
		}
	})
}

func TestParseRoleAndFormat(t *testing.T) {
	r, err := tools.ParseRole("")
	require.NoError(t, err)
	assert.Equal(t, tools.RoleAgent, r)
	_, err = tools.ParseRole("admin")
	assert.ErrorContains(t, err, `role must be "agent" or "compact_worker"`)
	f, err := tools.ParseFormat("")
	require.NoError(t, err)
	assert.Equal(t, tools.FormatMCP, f)
	_, err = tools.ParseFormat("gemini")
	assert.ErrorContains(t, err, "format must be")
}

func TestOverviewIsBounded(t *testing.T) {
	// Ensures the overview after a change is the counts and the tasks in
	// progress (at most 10 of them, by id), in the text and the structured
	// result alike, and that a status update's text at 20 open tasks with
	// subjects of 40 characters is at most 100 bytes.
	st := store.New()
	var res tools.Result
	for i := range 20 {
		tools.Execute(st, mustDecode(t, tools.TaskCreate, fmt.Sprintf(`{"subject":"Step %02d of the plan, a subject of usual","description":"%s"}`, i+1, strings.Repeat("d", 115))))
	}
	res, _ = tools.Execute(st, mustDecode(t, tools.TaskUpdate, `{"taskid":7,"status":"inprogress"}`))
	assert.Equal(t, "#7 inprogress: Step 07 of the plan, a subject of usual\n19 pending, inprogress #7", res.Text())
	assert.LessOrEqual(t, len(res.Text()), 100)

	for i := 1; i <= 12; i++ {
		res, _ = tools.Execute(st, mustDecode(t, tools.TaskUpdate, fmt.Sprintf(`{"taskid":%d,"status":"inprogress"}`, i)))
	}
	assert.Equal(t, "#12 inprogress: Step 12 of the plan, a subject of usual\n"+
		"8 pending, 12 inprogress (#1, #2, #3, #4, #5, #6, #7, #8, #9, #10, …)", res.Text())
	assert.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, res.StructuredContent.(wire.Written).InProgress)
	sc, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(sc), 250, "the structured result: %s", sc)
}

func TestResultsFitTheHostsLimit(t *testing.T) {
	// Ensures no result's text or structured JSON passes MaxResultChars
	// (Claude Code previews a larger MCP result instead of showing it),
	// that the counts come first, that a write does not echo a long
	// description, and that TaskList keeps every task it can, saying what
	// it left out and how to read it.
	long := strings.Repeat("x", tools.MaxDescriptionRunes)
	for name, tc := range map[string]struct {
		n, descLen int
		allListed  bool
	}{
		"20 tasks, 200 characters each":     {20, 200, true},
		"40 tasks, 2,000 characters each":   {40, 2000, true},
		"200 tasks, 16,000 characters each": {200, tools.MaxDescriptionRunes, true},
		"10,000 tasks":                      {10000, 50, false},
	} {
		st := store.New()
		for i := range tc.n {
			tools.Execute(st, mustDecode(t, tools.TaskCreate, fmt.Sprintf(`{"subject":"Task %d","description":%q}`, i+1, long[:tc.descLen])))
			if i%3 == 0 {
				tools.Execute(st, mustDecode(t, tools.TaskUpdate, fmt.Sprintf(`{"taskid":%d,"status":"completed"}`, i+1)))
			}
		}
		for _, call := range []tools.Call{mustDecode(t, tools.TaskList, `{}`), mustDecode(t, tools.TaskGet, `{"taskid":2}`),
			mustDecode(t, tools.TaskUpdate, fmt.Sprintf(`{"taskid":2,"description":%q}`, long))} {
			res, _ := tools.Execute(st, call)
			require.False(t, res.IsError, res.Text())
			sc, err := json.Marshal(res.StructuredContent)
			require.NoError(t, err)
			assert.LessOrEqual(t, tools.Length(string(sc)), tools.MaxResultChars, "%s: %s structured", name, call.Name)
			assert.LessOrEqual(t, tools.Length(res.Text()), tools.MaxResultChars, "%s: %s text", name, call.Name)
			assert.True(t, strings.HasPrefix(string(sc), `{"counts"`) || strings.HasPrefix(string(sc), `{"task"`), "%s: %s: counts first: %.80s", name, call.Name, sc)
			if call.Name != tools.TaskList {
				continue
			}
			l := res.StructuredContent.(wire.Listing)
			assert.Equal(t, tc.n, l.Counts.Total)
			if tc.allListed {
				assert.Equal(t, tc.n, len(l.Tasks), "%s: every task is listed", name)
			} else {
				assert.Equal(t, l.Counts.Pending+l.Counts.InProgress, len(l.Tasks)+l.MoreOpen, "%s: every open task listed or counted", name)
				assert.NotEmpty(t, l.Note, name)
			}
			if tc.descLen > 200 {
				assert.Contains(t, l.Note, "TaskGet shows any task whole", name)
				assert.Contains(t, res.Text(), "TaskGet shows any task whole", name)
			}
		}
	}
	st := store.New()
	res, _ := tools.Execute(st, mustDecode(t, tools.TaskCreate, fmt.Sprintf(`{"subject":"Long","description":%q}`, long)))
	assert.Equal(t, "#1 pending: Long\n1 pending", res.Text(), "the model has just written it: not echoed")
}

func TestResultsConformToOutputSchema(t *testing.T) {
	// Ensures every successful result's structuredContent conforms to the
	// outputSchema its tool declares (MCP clients validate it), from an
	// empty list through a long one, and that the schemas reject what the
	// old shapes sent (an empty list left out).
	schemas := map[string]*jsonschema.Resolved{}
	for _, d := range tools.Defs(tools.RoleAgent) {
		var s jsonschema.Schema
		require.NoError(t, json.Unmarshal(d.OutputSchema, &s), d.Name)
		r, err := s.Resolve(nil)
		require.NoError(t, err, d.Name)
		schemas[d.Name] = r
	}
	st := store.New()
	calls := []struct{ tool, args string }{
		{tools.TaskList, `{}`},
		{tools.TaskCreate, `{"subject":"A"}`},
		{tools.TaskCreate, `{"subject":"B","description":"multi\nline"}`},
		{tools.TaskUpdate, `{"taskid":1,"status":"in_progress"}`},
		{tools.TaskUpdate, `{"taskid":1,"status":"completed"}`},
		{tools.TaskUpdate, `{"taskid":2,"status":"deleted"}`}, // no open tasks left
		{tools.TaskGet, `{"taskid":2}`},
		{tools.TaskList, `{}`},
	}
	for range 25 {
		calls = append(calls, struct{ tool, args string }{tools.TaskCreate, `{"subject":"more"}`})
	}
	calls = append(calls, struct{ tool, args string }{tools.TaskList, `{}`})
	// A list past the host's limit: TaskList shortens it (note, folded).
	for range 600 {
		calls = append(calls, struct{ tool, args string }{tools.TaskCreate, `{"subject":"` + strings.Repeat("s", 80) + `"}`})
	}
	calls = append(calls, struct{ tool, args string }{tools.TaskUpdate, `{"taskid":3,"status":"completed"}`},
		struct{ tool, args string }{tools.TaskList, `{}`})
	for i, c := range calls {
		res, _ := tools.Execute(st, mustDecode(t, c.tool, c.args))
		require.False(t, res.IsError, "call %d", i)
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		var v any
		require.NoError(t, json.Unmarshal(b, &v))
		assert.NoError(t, schemas[c.tool].Validate(v), "call %d %s %s: %s", i, c.tool, c.args, b)
	}

	var old any
	require.NoError(t, json.Unmarshal([]byte(`{"counts":{"total":0,"pending":0,"inprogress":0,"completed":0,"deleted":0}}`), &old))
	assert.Error(t, schemas[tools.TaskList].Validate(old), "tasks is required")
	require.NoError(t, json.Unmarshal([]byte(`{"task":{"taskid":1,"status":"pending","subject":"A"}}`), &old))
	assert.Error(t, schemas[tools.TaskCreate].Validate(old), "the counts are required")
}

func TestToolAnnotations(t *testing.T) {
	// Ensures the MCP tool list gives each tool a title, its outputSchema and
	// the hints hosts act on: reads are read-only (Claude Code's plan mode
	// runs them without asking) and nothing is destructive.
	b, err := json.Marshal(tools.Render(tools.Defs(tools.RoleAgent), tools.FormatMCP))
	require.NoError(t, err)
	var list []struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  map[string]any  `json:"annotations"`
	}
	require.NoError(t, json.Unmarshal(b, &list))
	want := map[string]map[string]any{
		tools.TaskCreate: {"title": "Create task", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false},
		tools.TaskList:   {"title": "List tasks", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
		tools.TaskGet:    {"title": "Get task", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
		tools.TaskUpdate: {"title": "Update task", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
	}
	require.Len(t, list, 4)
	for _, tool := range list {
		assert.Equal(t, want[tool.Name], tool.Annotations, tool.Name)
		assert.Equal(t, want[tool.Name]["title"], tool.Title, tool.Name)
		assert.Contains(t, string(tool.OutputSchema), `"type":"object"`, tool.Name)
	}

	b, err = json.Marshal(tools.Render(tools.Defs(tools.RoleAgent), tools.FormatAnthropic))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "outputSchema", "the Anthropic API takes name, description and input_schema only")
}

func TestEncodeOnceAndRestore(t *testing.T) {
	// Ensures a change is encoded once into what the host receives (the
	// same bytes json.Marshal gives) and what the log keeps (the
	// structured result alone), and that the stored form restores to the
	// received one byte for byte; other results are stored whole.
	st := store.New()
	for i := range 20 {
		tools.Execute(st, mustDecode(t, tools.TaskCreate, fmt.Sprintf(`{"subject":"Step %d <of> the plan","description":"Cover the error paths & the \"quoted\" ones."}`, i+1)))
	}
	for _, c := range []tools.Call{
		mustDecode(t, tools.TaskUpdate, `{"taskid":3,"status":"inprogress"}`),
		mustDecode(t, tools.TaskCreate, `{"subject":"ünïcode ✓","description":"`+strings.Repeat("long ", 100)+`"}`),
		mustDecode(t, tools.TaskUpdate, `{"taskid":99,"status":"completed"}`), // an error
		mustDecode(t, tools.TaskList, `{}`),
	} {
		res, _ := tools.Execute(st, c)
		full, stored, err := tools.Encode(res)
		require.NoError(t, err)
		want, err := json.Marshal(res)
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(full), "%s: the received result", c.Name)
		assert.NotContains(t, string(full), `\u003c`, "not escaped for HTML: a model reads it")
		if _, isChange := res.StructuredContent.(wire.Written); isChange {
			assert.NotContains(t, string(stored), `"content"`, "a change is stored without its text")
			assert.Less(t, len(stored), len(full))
			assert.LessOrEqual(t, len(stored), 256, "stored at 20 open tasks: %s", stored)
		} else {
			assert.Equal(t, string(full), string(stored), "%s is stored whole", c.Name)
		}
		restored, err := tools.Restore(stored)
		require.NoError(t, err)
		assert.Equal(t, string(full), string(restored), "%s: restored", c.Name)
	}
}
