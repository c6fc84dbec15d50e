package claudecode_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestResumeOncePerChange ensures resuming a conversation again and again
// does not grow its context with copies of the list: the resume hook adds
// the list only when the conversation does not hold that very list yet (by
// its marker line), so after three resumes without a change the model has
// it exactly once; after a change (a TaskUpdate from another client) the
// next resume adds the new list, once.
func TestResumeOncePerChange(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := claudecode.New(t, claudecode.Options{Respond: p.Respond})
	a := uuid.NewString()
	p.Set(modelapi.NewScript(
		loadTools,
		modelapi.Call(taskCreate, map[string]any{"subject": "Write the parser"}),
		modelapi.Call(taskCreate, map[string]any{"subject": "Test the parser"}),
		modelapi.Text("Planned."),
	))
	h.Print(t, "Plan.", "--session-id", a)

	p.Set(modelapi.NewScript())
	var first string
	for i := 1; i <= 3; i++ {
		h.Print(t, "Again.", "--resume", a)
		last := h.API.LastMain(t)
		got := markers(last)
		require.Len(t, got, 1, "resume %d: the list's marker should be in the conversation exactly once; hook runs: %+v", i, h.Hooks())
		if i == 1 {
			first = got[0]
			assert.Contains(t, first, a)
			hook := lastHook(t, h)
			assert.Equal(t, "resume", hook.Source)
			assert.Contains(t, hook.Context, first)
		} else {
			assert.Equal(t, first, got[0])
			assert.Empty(t, lastHook(t, h).Context, "resume %d: the hook added the list again", i)
		}
		// Once in the hook's list (the TaskCreate's own result says it too).
		assert.Equal(t, 1, strings.Count(strings.Join(hookContexts(last), "\n"), "#2 [pending] Test the parser"), "resume %d", i)
	}

	callTool(t, h, a, "TaskUpdate", map[string]any{"taskid": 1, "status": "completed"})
	h.Print(t, "Again, after a change.", "--resume", a)
	last := h.API.LastMain(t)
	got := markers(last)
	require.Len(t, got, 2, "after a change, the new list should be added once more")
	assert.Equal(t, first, got[0])
	assert.NotEqual(t, first, got[1], "the changed list has the same marker")
	ctx := hookContexts(last)
	require.NotEmpty(t, ctx)
	assert.Contains(t, ctx[len(ctx)-1], "#1 [completed] Write the parser")
	assert.Contains(t, ctx[len(ctx)-1], got[1])
}
