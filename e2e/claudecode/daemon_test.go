package claudecode_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestDaemonKilled ensures a daemon killed hard (SIGKILL) between two
// turns loses nothing: the next "claude -p --resume" gets a daemon on the
// same socket and database (the hook or the bridge starts one), its
// TaskCreate succeeds with the next id, and the list holds every task.
func TestDaemonKilled(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := claudecode.New(t, claudecode.Options{Respond: p.Respond})
	a := uuid.NewString()
	p.Set(modelapi.NewScript(loadTools, modelapi.Call(taskCreate, map[string]any{"subject": "One"}), modelapi.Text("Planned.")))
	h.Print(t, "Plan.", "--session-id", a)
	before := h.Daemon.Status(t)
	h.Daemon.Kill(t)

	n := len(h.API.Main())
	p.Set(modelapi.NewScript(
		modelapi.Call(taskCreate, map[string]any{"subject": "Two"}),
		modelapi.Call(taskList, nil),
		modelapi.Text("Still here."),
	))
	h.Print(t, "Go on.", "--resume", a)
	main := since(h, n)
	require.Len(t, main, 3, h.API.Dump())
	created := toolJSON(t, main[1].PendingToolResults()[0])
	assert.Contains(t, created["message"], "#2")
	listed := toolJSON(t, main[2].PendingToolResults()[0])
	assert.Equal(t, []string{"1 pending One", "2 pending Two"}, tasksOf(t, listed))

	after := h.Daemon.Status(t)
	assert.NotEqual(t, before.PID, after.PID, "the killed daemon answers")
	assert.Equal(t, h.Daemon.DB, after.Database)
	assert.Equal(t, []string{"1 pending One", "2 pending Two"}, h.Daemon.Subjects(t, a))
}

// TestNoDaemonAtStart ensures Claude Code started with no daemon running
// (and no hook to start one) still has the tools: the bridge lists them
// without a daemon, ToolSearch loads them, and the first TaskCreate
// starts the daemon (detached, on the configured socket and database) and
// succeeds; the list is in that database afterwards. Where the bridge is
// still connecting when the model first searches, the model searches
// again, as a real one would.
func TestNoDaemonAtStart(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	// On a loaded machine the bridge may still be connecting when the
	// model first searches (Claude Code then says so, and ToolSearch finds
	// nothing): a model searches again, and so does this one, a few times.
	searches := 0
	respond := func(r *modelapi.Request) (modelapi.Reply, bool) {
		if modelapi.AnswersTool("ToolSearch")(r) && !r.HasTool(taskCreate) && searches < 5 {
			searches++
			return loadTools, true
		}
		return p.Respond(r)
	}
	h := claudecode.New(t, claudecode.Options{Respond: respond, NoDaemon: true, NoHook: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := client.Dial(ctx, h.Daemon.Socket)
	require.Error(t, err, "a daemon answers before the test started one")

	a := uuid.NewString()
	p.Set(modelapi.NewScript(loadTools, modelapi.Call(taskCreate, map[string]any{"subject": "One"}), modelapi.Text("Planned.")))
	h.Print(t, "Plan.", "--session-id", a)
	main := h.API.Main()
	require.Len(t, main, 3+searches, h.API.Dump())
	// The first request names the deferred Task tools, or, when Claude Code
	// built it while the bridge was still connecting (a loaded machine: the
	// bridge starts the daemon first), says that the tasks server is
	// connecting: never neither, so the model knows the tools are coming.
	if first := main[0].ConversationText(); !strings.Contains(first, taskCreate) {
		assert.Regexp(t, `(?s)\btasks\b.{0,200}still connecting|still connecting.{0,200}\btasks\b`, first, "the first request neither names the deferred tools nor says the tasks server is connecting")
		t.Logf("the bridge was still connecting at the first request; the model searched %d more times", searches)
	}
	found := main[1+searches].PendingToolResults()
	require.Len(t, found, 1)
	for _, name := range []string{taskCreate, taskList, taskGet, taskUpdate} {
		assert.Contains(t, string(found[0].Raw), name, "ToolSearch did not find %s", name)
		assert.True(t, main[1+searches].HasTool(name), "%s not offered after ToolSearch", name)
	}
	created := toolJSON(t, main[2+searches].PendingToolResults()[0])
	assert.Contains(t, created["message"], "#1")

	st := h.Daemon.Status(t)
	assert.Equal(t, h.Daemon.DB, st.Database)
	assert.Equal(t, []string{"1 pending One"}, h.Daemon.Subjects(t, a))
}
