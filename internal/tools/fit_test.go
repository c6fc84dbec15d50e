package tools_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestRenderWithin(t *testing.T) {
	// Ensures a list is shown whole when it fits, and otherwise shortened
	// within the budget in the order the model can best spare: closed
	// tasks' descriptions, then open ones', then subjects, then closed
	// tasks folded into id ranges; the counts always come first, and every
	// id and status stays as long as anything can.
	var tasks []tasksessiond.Task
	for i := 1; i <= 60; i++ {
		st := tasksessiond.Pending
		switch i % 4 {
		case 0:
			st = tasksessiond.Completed
		case 1:
			st = tasksessiond.InProgress
		case 2:
			if i%8 == 2 {
				st = tasksessiond.Deleted
			}
		}
		tasks = append(tasks, tasksessiond.Task{Taskid: i, Status: st, Subject: fmt.Sprintf("Task number %d with a subject", i), Description: strings.Repeat("word ", 100)})
	}
	names := tools.PrefixedNames("mcp__tasks__")
	full := tools.RenderWithin(tasks, math.MaxInt, names)
	assert.NotContains(t, full, "Shortened")
	assert.Equal(t, 60, strings.Count(full, strings.TrimSpace(strings.Repeat("word ", 100))))

	for _, budget := range []int{30000, 20000, 9500, 5000, 3000, 1500, 600, 200} {
		s := tools.RenderWithin(tasks, budget, names)
		assert.LessOrEqual(t, tools.Length(s), budget, "budget %d", budget)
		assert.True(t, strings.HasPrefix(s, "Tasks: 60 tasks ("), "budget %d: counts first", budget)
		assert.Contains(t, s, "Shortened to fit; mcp__tasks__TaskGet shows any task in full", budget)
		if budget >= 3000 {
			for _, task := range tasks {
				if task.Status.Open() {
					assert.Contains(t, s, fmt.Sprintf("#%d [%s]", task.Taskid, task.Status), "budget %d: every open task", budget)
				}
			}
		}
		if budget >= 3000 && !strings.Contains(s, "completed: #") {
			assert.Contains(t, s, "#4 [completed]", "budget %d: closed tasks listed one by one", budget)
		}
	}
	ranged := tools.RenderWithin(tasks, 2000, names)
	assert.Contains(t, ranged, "completed: #4, #8, #12")
	assert.Contains(t, ranged, "deleted: #2, #10")

	tiny := tools.RenderWithin(tasks, 600, names)
	assert.Contains(t, tiny, "more open tasks, left out to fit")

	assert.Equal(t, "The task list is empty. Use mcp__tasks__TaskCreate to plan the work.", tools.RenderWithin(nil, 100, names))
	assert.Equal(t, 3, tools.Length("a😀"), "counted as JavaScript counts: UTF-16 units")
}

func TestListOfAlternatingClosedTasksFits(t *testing.T) {
	// Ensures a list whose closed tasks do not fold into ranges (completed
	// and deleted alternate) still fits the limit in its text and in its
	// structured JSON, the ranges capped with the number left out.
	for _, n := range []int{6_000, 20_000} {
		st := store.New()
		for i := 1; i <= n; i++ {
			st.Create(fmt.Sprintf("Task %d", i), "")
			status := tasksessiond.Completed
			if i%2 == 0 {
				status = tasksessiond.Deleted
			}
			if i%100 != 0 { // a few stay open
				_, err := st.Update(tasksessiond.Change{Taskid: i, Status: status})
				require.NoError(t, err)
			}
		}
		res := tools.ListResult(st)
		sc, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		assert.LessOrEqual(t, tools.Length(string(sc)), tools.MaxResultChars, "%d tasks: structured", n)
		assert.LessOrEqual(t, tools.Length(res.Text()), tools.MaxResultChars, "%d tasks: text", n)
		l := res.StructuredContent.(wire.Listing)
		assert.Contains(t, l.Omitted["completed"], "more", "%d tasks: the ranges say what they leave out", n)
		assert.Len(t, append(l.Tasks, make([]tasksessiond.Task, len(l.Brief))...), n/100, "%d tasks: every open task is listed", n)
	}
}

func TestOpenTasksComeFirst(t *testing.T) {
	// Ensures a list puts the counts, then every open task, then the closed
	// ones, in its text and in its structured JSON, at every budget: what
	// a host cuts from the end is closed tasks, never the plan ahead. And
	// that ListResultWithin holds a list of 300 tasks with 500-character
	// descriptions to Codex CLI's 10,000 bytes for a model outside its
	// catalog with every open task named.
	st := store.New()
	for i := 1; i <= 300; i++ {
		st.Create(fmt.Sprintf("Task number %03d", i), strings.Repeat("x", 500))
	}
	done, gone := tasksessiond.Completed, tasksessiond.Deleted
	for i := 1; i <= 120; i++ {
		p := tasksessiond.Change{Taskid: i, Status: done}
		if i%10 == 0 {
			p.Status = gone
		}
		_, err := st.Update(p)
		require.NoError(t, err)
	}
	bytes := func(s string) int { return len(s) }
	for _, budget := range []int{tools.MaxResultChars, 20_000, 9_500, 6_000} {
		res := tools.ListResultWithin(st.List(), budget, bytes)
		sc, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(sc), budget, "budget %d: structured", budget)
		assert.LessOrEqual(t, len(res.Text()), budget, "budget %d: text", budget)
		l := res.StructuredContent.(wire.Listing)
		seenClosed := false
		for _, task := range l.Tasks {
			if !task.Status.Open() {
				seenClosed = true
			} else {
				assert.False(t, seenClosed, "budget %d: open #%d after a closed task", budget, task.Taskid)
			}
		}
		for _, line := range l.Brief {
			if !strings.Contains(line, "[pending]") {
				seenClosed = true
			} else {
				assert.False(t, seenClosed, "budget %d: open %q after a closed task", budget, line)
			}
		}
		t.Logf("budget %d: text %d bytes, JSON %d bytes, %d tasks with descriptions, %d brief", budget, len(res.Text()), len(sc), len(l.Tasks), len(l.Brief))
		text := res.Text()
		assert.True(t, strings.HasPrefix(text, "Tasks: 300 tasks"), "budget %d: counts first", budget)
		first := strings.Index(text, "\n#121 [pending]")
		require.GreaterOrEqual(t, first, 0, "budget %d", budget)
		if i := strings.Index(text, "[completed]"); i >= 0 {
			assert.Greater(t, i, first, "budget %d: closed tasks after the open ones", budget)
		}
		if budget >= 9_500 {
			for i := 121; i <= 300; i++ {
				assert.Contains(t, text, fmt.Sprintf("\n#%d [pending] Task number %03d", i, i), "budget %d: every open task named", budget)
				if !strings.Contains(string(sc), fmt.Sprintf(`"taskid":%d,`, i)) {
					assert.Contains(t, string(sc), fmt.Sprintf(`"#%d [pending] Task number %03d"`, i, i), "budget %d: every open task in the JSON", budget)
				}
			}
		}
		assert.Less(t, strings.Index(string(sc), `"counts"`), 10)
	}
}
