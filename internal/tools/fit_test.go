package tools_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

func TestRenderWithin(t *testing.T) {
	// Ensures a list is shown whole when it fits, and otherwise shortened
	// within the budget in the order the model can best spare: closed
	// tasks' descriptions, then open ones', then subjects, then closed
	// tasks folded into id ranges; the counts always come first, and every
	// id and status stays as long as anything can.
	var tasks []store.Task
	for i := 1; i <= 60; i++ {
		st := store.Pending
		switch i % 4 {
		case 0:
			st = store.Completed
		case 1:
			st = store.InProgress
		case 2:
			if i%8 == 2 {
				st = store.Deleted
			}
		}
		tasks = append(tasks, store.Task{Taskid: i, Status: st, Subject: fmt.Sprintf("Task number %d with a subject", i), Description: strings.Repeat("word ", 100)})
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
			status := store.Completed
			if i%2 == 0 {
				status = store.Deleted
			}
			if i%100 != 0 { // a few stay open
				_, err := st.Update(i, store.Patch{Status: &status})
				require.NoError(t, err)
			}
		}
		res := tools.ListResult(st)
		sc, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		assert.LessOrEqual(t, tools.Length(string(sc)), tools.MaxResultChars, "%d tasks: structured", n)
		assert.LessOrEqual(t, tools.Length(res.Text()), tools.MaxResultChars, "%d tasks: text", n)
		l := res.StructuredContent.(tools.Listing)
		assert.Contains(t, l.Omitted["completed"], "more", "%d tasks: the ranges say what they leave out", n)
		assert.Len(t, l.Tasks, n/100, "%d tasks: every open task is listed", n)
	}
}
