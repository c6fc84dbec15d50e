package tools_test

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
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
	// tasks' descriptions, then open ones', then runs of closed tasks
	// folded in place, then subjects; the counts always come first, the
	// tasks stay in taskid order, and every id and status stays as long as
	// anything can.
	var tasks []tasksessiond.Task
	for i := 1; i <= 60; i++ {
		st := tasksessiond.Pending
		switch {
		case i <= 12:
			st = tasksessiond.Completed
		case i == 13 || i == 14:
			st = tasksessiond.Deleted
		case i%4 == 0:
			st = tasksessiond.Completed
		case i%4 == 1:
			st = tasksessiond.InProgress
		}
		tasks = append(tasks, tasksessiond.Task{Taskid: i, Status: st, Subject: fmt.Sprintf("Task number %d with a subject", i), Description: strings.Repeat("word ", 100)})
	}
	names := tools.PrefixedNames("mcp__tasks__")
	full := tools.RenderWithin(tasks, math.MaxInt, names)
	assert.NotContains(t, full, "Shortened")
	assert.Equal(t, 60, strings.Count(full, strings.TrimSpace(strings.Repeat("word ", 100))))
	assert.NoError(t, inTaskidOrder(full))

	for _, budget := range []int{30000, 20000, 9500, 5000, 3000, 1500, 600, 200} {
		s := tools.RenderWithin(tasks, budget, names)
		assert.LessOrEqual(t, tools.Length(s), budget, "budget %d", budget)
		assert.True(t, strings.HasPrefix(s, "Tasks: 23 pending, 11 inprogress, 24 completed, 2 deleted."), "budget %d: counts first: %.80s", budget, s)
		assert.Contains(t, s, "Shortened to fit; mcp__tasks__TaskGet shows any task whole", budget)
		assert.NoError(t, inTaskidOrder(s), "budget %d", budget)
		if budget >= 3000 {
			for _, task := range tasks {
				if task.Status.Open() {
					assert.Contains(t, s, fmt.Sprintf("#%d [%s]", task.Taskid, task.Status), "budget %d: every open task", budget)
				}
			}
		}
		if budget >= 3000 && !strings.Contains(s, "#1–#12 completed") {
			assert.Contains(t, s, "#4 [completed]", "budget %d: closed tasks listed one by one", budget)
		}
	}
	folded := tools.RenderWithin(tasks, 2000, names)
	assert.Contains(t, folded, "\n#1–#12 completed\n#13–#14 deleted\n#15 [pending]", "runs of closed tasks fold in place")
	assert.Contains(t, folded, "\n#16 completed\n#17 [inprogress]")

	tiny := tools.RenderWithin(tasks, 600, names)
	assert.Contains(t, tiny, "more open tasks, left out to fit")

	assert.Equal(t, "The task list is empty. Use mcp__tasks__TaskCreate to plan the work.", tools.RenderWithin(nil, 100, names))
	assert.Equal(t, 3, tools.Length("a😀"), "counted as JavaScript counts: UTF-16 units")
}

var idRE = regexp.MustCompile(`(?m)^#([0-9]+)`)

// inTaskidOrder checks that the tasks a text lists (a line each, or a
// folded run) come in increasing taskid order.
func inTaskidOrder(text string) error {
	last := 0
	for _, m := range idRE.FindAllStringSubmatch(text, -1) {
		id, _ := strconv.Atoi(m[1])
		if id <= last {
			return fmt.Errorf("#%d after #%d:\n%s", id, last, text)
		}
		last = id
	}
	return nil
}

func TestListOfAlternatingClosedTasksFits(t *testing.T) {
	// Ensures a list whose closed tasks do not fold into runs (completed
	// and deleted alternate) still fits the limit in its text and in its
	// structured JSON, with every open task listed: the closed ones go
	// first.
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
		assert.Len(t, l.Tasks, n/100, "%d tasks: every open task is listed", n)
		assert.NoError(t, inTaskidOrder(res.Text()))
	}
}

func TestListKeepsTaskidOrder(t *testing.T) {
	// Ensures a list is the store's snapshot in taskid order at every
	// budget, in its text and in its structured JSON, closed tasks
	// folded in place; and that ListResultWithin holds a list of 300
	// tasks with 500-character descriptions to Codex CLI's 10,000 bytes
	// for a model outside its catalog with every open task named.
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
		assert.LessOrEqual(t, len(res.Text()), budget, "budget %d: text", budget)
		l := res.StructuredContent.(wire.Listing)
		last := 0
		for _, task := range l.Tasks {
			assert.Greater(t, task.Taskid, last, "budget %d: taskid order", budget)
			last = task.Taskid
		}
		text := res.Text()
		assert.NoError(t, inTaskidOrder(text), "budget %d", budget)
		t.Logf("budget %d: text %d bytes, %d tasks shown, %d folded runs", budget, len(text), len(l.Tasks), len(l.Folded))
		assert.True(t, strings.HasPrefix(text, "Tasks: 180 pending, 108 completed, 12 deleted."), "budget %d: counts first", budget)
		if budget >= 9_500 {
			for i := 121; i <= 300; i++ {
				assert.Contains(t, text, fmt.Sprintf("\n#%d [pending] Task number %03d", i, i), "budget %d: every open task named", budget)
			}
		}
		if budget == 9_500 {
			assert.Contains(t, text, "\n#1–#9 completed\n#10 deleted\n#11–#19 completed", "budget %d: folded in place", budget)
			assert.Contains(t, l.Folded, wire.Fold{From: 1, To: 9, Status: done})
		}
	}
}
