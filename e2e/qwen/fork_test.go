package qwen_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/qwen"
)

// A fork (--resume A --fork-session) is a new session id over A's history:
// its list is rebuilt from its chat record, so it has A's tasks and goes on
// from there; A keeps its own.
func TestFork(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := qwen.New(t, qwen.Options{Respond: p.Respond})
	p.Set(plan())
	a := h.Run(t, "Plan the parser work.").SessionID

	p.Set(modelapi.NewScript(
		load,
		modelapi.Call(qwen.TaskCreate, map[string]any{"subject": "Only in the fork"}),
		modelapi.Text("Forked."),
	))
	f := h.Run(t, "Go on in a fork.", "--resume", a, "--fork-session").SessionID
	require.NotEqual(t, a, f, "the fork has its own id")
	starts := h.Hooks("SessionStart")
	t.Logf("the fork's SessionStart: source %q, session %s", starts[len(starts)-1].Source, starts[len(starts)-1].SessionID)
	assert.Equal(t, []string{"#1 pending Write the parser", "#2 pending Test the parser", "#3 pending Only in the fork"}, tasks(h.Daemon.Resume(t, f).Tasks))
	assert.Equal(t, []string{"#1 pending Write the parser", "#2 pending Test the parser"}, tasks(h.Daemon.Resume(t, a).Tasks), "A keeps its own")
}
