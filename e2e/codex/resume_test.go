package codex_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/codex"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// plan has the model load the tools and make two tasks.
func plan() *modelapi.Script {
	return modelapi.NewScript(
		loadTools,
		modelapi.Call(taskCreate, map[string]any{"subject": "Write the parser"}),
		modelapi.Call(taskCreate, map[string]any{"subject": "Test the parser"}),
		modelapi.Text("Planned."),
	)
}

// TestResume ensures "codex exec resume ID" comes back to the same list:
// the resume hook puts it in front of the model (a developer message before
// the prompt), TaskList returns it, the next TaskCreate continues the ids;
// a second resume without a change adds nothing (the hook finds the list's
// marker in the rollout), and the list is still in the model's context
// once; and a new "codex exec" starts a new thread with an empty list.
func TestResume(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := codex.New(t, codex.Options{Respond: p.Respond})
	p.Set(plan())
	a := h.Exec(t, "Plan the parser work.").ThreadID

	n := len(h.API.Main())
	resumed := p.Set(modelapi.NewScript(
		modelapi.Call(taskList, nil),
		modelapi.Call(taskCreate, map[string]any{"subject": "Ship it"}),
		modelapi.Text("Three tasks now."),
	))
	res := h.Resume(t, a, "Where are we?")
	assert.Equal(t, a, res.ThreadID, "resume kept the thread id")
	assert.Equal(t, "Three tasks now.", res.Message)
	require.True(t, resumed.Done(), h.API.Dump())
	main := since(h, n)
	require.Len(t, main, 3, h.API.Dump())

	hook := lastHook(t, h)
	assert.Equal(t, "resume", hook.Source)
	assert.Equal(t, a, hook.SessionID)
	require.NotEmpty(t, hook.Context)
	ctx := hookContexts(main[0])
	require.Len(t, ctx, 1, "the resume hook's list is not in the resumed turn (as a developer message)")
	assert.Equal(t, hook.Context, ctx[0], "the hook's context reached the model verbatim")
	assert.Contains(t, ctx[0], "#1 [pending] Write the parser")
	assert.Contains(t, ctx[0], "#2 [pending] Test the parser")
	// It comes right before the prompt.
	last := main[0].Messages[len(main[0].Messages)-1]
	assert.Equal(t, "Where are we?", last.Text())
	prev := main[0].Messages[len(main[0].Messages)-2]
	assert.Equal(t, "developer", prev.Role)

	// The tools came back with the resumed history (tool_search_output).
	assert.True(t, main[0].HasTool(taskList), "the loaded tools are not offered after resume")
	listed := toolJSON(t, pending(t, main[1]))
	assert.Equal(t, []string{"1 pending Write the parser", "2 pending Test the parser"}, tasksOf(t, listed))
	created := toolJSON(t, pending(t, main[2]))
	assert.Contains(t, created["message"], "#3")
	assert.Equal(t, []string{"1 pending Write the parser", "2 pending Test the parser", "3 pending Ship it"}, h.Daemon.Subjects(t, a))

	// Again, after a change (the TaskCreate above): the new list, once;
	// then again without a change: nothing more.
	p.Set(modelapi.NewScript(modelapi.Text("Seen.")))
	h.Resume(t, a, "Again.")
	r := h.API.LastMain(t)
	assert.Len(t, markers(r), 2, "after a change the hook adds the new list")
	assert.Contains(t, lastHook(t, h).Context, "#3 [pending] Ship it")
	h.Resume(t, a, "Once more.")
	r = h.API.LastMain(t)
	assert.Empty(t, lastHook(t, h).Context, "the hook added the list again though the rollout holds it")
	assert.Len(t, markers(r), 2)
	assert.Equal(t, 1, strings.Count(strings.Join(hookContexts(r), "\n"), "#3 [pending] Ship it"), "the newest list, once (the TaskCreate's own result says it too)")

	// A new exec: a new thread, a new, empty list.
	n = len(h.API.Main())
	p.Set(modelapi.NewScript(
		loadTools,
		modelapi.Call(taskList, nil),
		modelapi.Call(taskCreate, map[string]any{"subject": "Other work"}),
		modelapi.Text("Fresh."),
	))
	b := h.Exec(t, "Something else.").ThreadID
	require.NotEqual(t, a, b)
	main = since(h, n)
	require.Len(t, main, 4, h.API.Dump())
	assert.Empty(t, markers(main[0]), "a new thread got a list")
	assert.Equal(t, []string{}, tasksOf(t, toolJSON(t, pending(t, main[2]))))
	assert.Contains(t, toolJSON(t, pending(t, main[3]))["message"], "#1")
	assert.Equal(t, []string{"1 pending Other work"}, h.Daemon.Subjects(t, b))
	assert.Len(t, h.Daemon.Subjects(t, a), 3, "the first thread's list is untouched")
}
