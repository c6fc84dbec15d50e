package codex_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/codex"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestLostDatabase ensures a thread whose database was moved away gets its
// list back from its rollout (the Task calls Codex recorded there, failed
// ones skipped): the resume hook rebuilds it and puts it in front of the
// model, TaskList returns it, and the ids go on.
func TestLostDatabase(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := codex.New(t, codex.Options{Respond: p.Respond})
	p.Set(modelapi.NewScript(
		loadTools,
		modelapi.Call(taskCreate, map[string]any{"subject": "Write the parser"}),
		modelapi.Call(taskCreate, map[string]any{"subject": "Test the parser"}),
		modelapi.Call(taskUpdate, map[string]any{"taskid": 9, "status": "completed"}), // fails: no #9
		modelapi.Call(taskUpdate, map[string]any{"taskid": 1, "status": "inprogress"}),
		modelapi.Text("Planned."),
	))
	a := h.Exec(t, "Plan the parser work.").ThreadID
	want := []string{"1 inprogress Write the parser", "2 pending Test the parser"}
	require.Equal(t, want, h.Daemon.Subjects(t, a))

	h.Daemon.LoseDatabase(t)
	n := len(h.API.Main())
	back := p.Set(modelapi.NewScript(
		modelapi.Call(taskList, nil),
		modelapi.Call(taskCreate, map[string]any{"subject": "Ship it"}),
		modelapi.Text("Back."),
	))
	h.Resume(t, a, "Where are we?")
	require.True(t, back.Done(), h.API.Dump())
	main := since(h, n)
	require.Len(t, main, 3, h.API.Dump())
	ctx := hookContexts(main[0])
	require.Len(t, ctx, 1, "the resume hook added no list")
	t.Logf("after the database was lost, the hook's context: %d bytes: %q", len(ctx[0]), ctx[0])
	assert.Contains(t, ctx[0], "#1 [inprogress] Write the parser")
	assert.Contains(t, ctx[0], "#2 [pending] Test the parser")
	assert.Equal(t, want, tasksOf(t, toolJSON(t, pending(t, main[1]))), "TaskList after the database was lost")
	assert.Contains(t, toolJSON(t, pending(t, main[2]))["message"], "#3")
	assert.Equal(t, append(want, "3 pending Ship it"), h.Daemon.Subjects(t, a))
}

// TestLostDatabaseNothingToRebuild ensures a thread that was shown a list
// whose Task calls are not in its rollout (the tasks were made elsewhere:
// here through the daemon's client) is told plainly, after the database
// was moved away, that its list was lost, instead of meeting an empty
// list its history contradicts.
func TestLostDatabaseNothingToRebuild(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := codex.New(t, codex.Options{Respond: p.Respond})
	p.Set(modelapi.NewScript(modelapi.Text("Hi.")))
	a := h.Exec(t, "Hello.").ThreadID
	createTasks(t, h.Daemon, a, 2, 40)
	p.Set(modelapi.NewScript(modelapi.Text("Seen.")))
	h.Resume(t, a, "Status?")
	require.Equal(t, "resume", lastHook(t, h).Source)

	h.Daemon.LoseDatabase(t)
	n := len(h.API.Main())
	p.Set(modelapi.NewScript(modelapi.Text("Understood.")))
	h.Resume(t, a, "Where are we?")
	main := since(h, n)
	require.Len(t, main, 1, h.API.Dump())
	dev := developerTexts(main[0])
	require.NotEmpty(t, dev)
	note := dev[len(dev)-1] // the hook's: right before the prompt
	t.Logf("after the database was lost, with nothing to rebuild from, the hook's context: %d bytes: %q", len(note), note)
	assert.Contains(t, note, "The task list of this conversation was lost (tasksessiond session "+a+")")
	assert.Contains(t, note, "gets #1")
}

// TestFork ensures "codex exec fork A" (a new thread over a copy of A's
// history) starts with the list A had at the fork point, rebuilt from the
// copied rollout: the fork's TaskList shows it and its TaskCreate goes on
// from there, while A keeps its own list.
func TestFork(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := codex.New(t, codex.Options{Respond: p.Respond})
	p.Set(modelapi.NewScript(
		loadTools,
		modelapi.Call(taskCreate, map[string]any{"subject": "Write the parser"}),
		modelapi.Call(taskCreate, map[string]any{"subject": "Test the parser"}),
		modelapi.Call(taskUpdate, map[string]any{"taskid": 1, "status": "inprogress"}),
		modelapi.Text("Planned."),
	))
	a := h.Exec(t, "Plan the parser work.").ThreadID
	want := []string{"1 inprogress Write the parser", "2 pending Test the parser"}

	n := len(h.API.Main())
	fork := p.Set(modelapi.NewScript(
		modelapi.Call(taskList, nil),
		modelapi.Call(taskCreate, map[string]any{"subject": "Ship it from the fork"}),
		modelapi.Text("Forked."),
	))
	f := h.Fork(t, a, "Go on in a fork.").ThreadID
	require.True(t, fork.Done(), h.API.Dump())
	require.NotEqual(t, a, f, "the fork kept the thread id")
	hook := lastHook(t, h)
	t.Logf("fork: SessionStart source=%q session_id=%s (A=%s), rollout %s", hook.Source, hook.SessionID, a, hook.TranscriptPath)
	main := since(h, n)
	require.Len(t, main, 3, h.API.Dump())
	t.Logf("the fork's TaskList: %s", codex.ToolOutput(pending(t, main[1])))
	assert.Equal(t, want, tasksOf(t, toolJSON(t, pending(t, main[1]))), "the fork's TaskList")
	assert.Contains(t, toolJSON(t, pending(t, main[2]))["message"], "#3")
	assert.Equal(t, append(want, "3 pending Ship it from the fork"), h.Daemon.Subjects(t, f))
	assert.Equal(t, want, h.Daemon.Subjects(t, a), "the source keeps its own list")
}
