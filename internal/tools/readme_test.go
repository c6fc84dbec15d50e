package tools_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// TestREADMETaskListOrder ensures what the README's tool table says of
// TaskList holds: the counts, then every task in taskid order, closed and
// deleted ones in their places; and the tool's own description says so.
func TestREADMETaskListOrder(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `TaskList` \\|.*$").FindString(string(readme))
	require.NotEmpty(t, row, "the README's tool table has no TaskList row")
	assert.Contains(t, row, "the counts, then every task in taskid order, `completed` and `deleted` included")
	for _, d := range tools.Defs(tools.RoleAgent) {
		if d.Name == tools.TaskList {
			assert.Contains(t, d.Description, "in taskid order")
		}
	}

	st := store.New()
	for _, s := range []string{"first", "second", "third", "fourth"} {
		tools.Execute(st, mustDecode(t, tools.TaskCreate, `{"subject":"`+s+`"}`))
	}
	tools.Execute(st, mustDecode(t, tools.TaskUpdate, `{"taskid":1,"status":"completed"}`))
	tools.Execute(st, mustDecode(t, tools.TaskUpdate, `{"taskid":3,"status":"in_progress"}`))
	tools.Execute(st, mustDecode(t, tools.TaskUpdate, `{"taskid":2,"status":"deleted"}`))
	res := tools.ListResult(st)
	l := res.StructuredContent.(wire.Listing)
	var ids []int
	for _, task := range l.Tasks {
		ids = append(ids, task.Taskid)
	}
	assert.Equal(t, []int{1, 2, 3, 4}, ids, "the structured list")
	text := res.Text()
	at := []int{strings.Index(text, "Tasks: ")}
	for _, s := range []string{"first", "second", "third", "fourth"} {
		at = append(at, strings.Index(text, s))
	}
	for i := 1; i < len(at); i++ {
		assert.Less(t, at[i-1], at[i], "the text: the counts, then the tasks in taskid order:\n%s", text)
	}
}
