package opencode_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/opencode"
)

// TestCompaction ensures OpenCode's automatic compaction (a reply reporting
// a context nearly full, between two tool calls of one turn) keeps the
// list: the plugin compacts the daemon session (the successor, named
// "<session>/<compaction message>", holds every task and the taskid
// counter) and hands the summariser the list; the first request after the
// compaction carries the list in OpenCode's compaction message, before
// the summary, exactly once; the next TaskCreate gets the next id; and a
// later "opencode run --session" (a new process) shows the model the same
// list at the same place, and goes on from there.
func TestCompaction(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := opencode.New(t, opencode.Options{Respond: p.Respond})
	full := modelapi.Call("TaskCreate", map[string]any{"subject": "Test the parser"})
	full.Usage = &modelapi.Usage{InputTokens: opencode.ContextLimit - 1000, OutputTokens: 10}
	p.Set(modelapi.NewScript(
		modelapi.Call("TaskCreate", map[string]any{"subject": "Write the parser"}),
		modelapi.Call("TaskUpdate", map[string]any{"taskid": 1, "status": "completed"}),
		full, // OpenCode compacts after this call, before the next request
		modelapi.Call("TaskCreate", map[string]any{"subject": "Ship it"}),
		modelapi.Text("Planned."),
	))
	a := h.Run(t, "Plan the parser work.").SessionID

	compacts := h.API.Of(modelapi.KindCompact)
	require.Len(t, compacts, 1, "OpenCode did not compact:\n%s", h.API.Dump())
	// The daemon: the session was compacted into its successor, which
	// holds every task (the completed one too) and the counter.
	c := h.Daemon.Client(t)
	root, err := c.GetSession(ctx10(t), a)
	require.NoError(t, err)
	assert.Equal(t, "compacted", root.Status)
	require.True(t, strings.HasPrefix(root.HeadID, a+"/msg_"), "the successor's id: %s", root.HeadID)
	succ := h.Daemon.Resume(t, a)
	assert.Equal(t, root.HeadID, succ.Session.ID)
	require.NotEmpty(t, succ.Messages)
	assert.Equal(t, "task_snapshot", succ.Messages[0].Kind)
	snapshot := succ.Messages[0].Content
	assert.Contains(t, snapshot, "#1 [completed] Write the parser\n#2 [pending] Test the parser")
	assert.Contains(t, snapshot, "the next TaskCreate gets #3")

	// The summariser was given the list (experimental.session.compacting).
	assert.Contains(t, compacts[0].LastUserText(), opencode.CompactAsk)
	assert.Contains(t, compacts[0].LastUserText(), snapshot)

	// The first request after the compaction: OpenCode's compaction
	// message (the model reads "What did we do so far?") now starts with
	// the list, then the summary answers it, then OpenCode's "continue".
	var after []*modelapi.Request
	for _, r := range h.API.Main() {
		if r.Seq > compacts[0].Seq {
			after = append(after, r)
		}
	}
	require.Len(t, after, 2, h.API.Dump())
	first := after[0]
	require.GreaterOrEqual(t, len(first.Messages), 3, h.API.Dump())
	m0 := first.Messages[0]
	assert.Equal(t, "user", m0.Role)
	require.Len(t, m0.Blocks, 2)
	assert.Equal(t, snapshot, m0.Blocks[0].Text, "the list, at the compaction")
	assert.Equal(t, opencode.CompactionQuestion, m0.Blocks[1].Text)
	assert.Equal(t, opencode.CompactSummary, first.Messages[1].Text())
	assert.Contains(t, first.LastUserText(), opencode.ContinuePrompt)
	for _, r := range after {
		assert.Equal(t, 1, strings.Count(r.ConversationText(), snapshot), "request %d: the list should be there once", r.Seq)
	}
	// Ids go on in the successor.
	assert.Contains(t, result(t, after[1], "TaskCreate"), "#3 pending: Ship it")
	assert.Equal(t, []string{"1 completed Write the parser", "2 pending Test the parser", "3 pending Ship it"}, h.Daemon.Subjects(t, a))

	// A new process continues the session: the list is in the same place,
	// once (the plugin finds the snapshot in the daemon by the compaction
	// message's id), and the ids go on.
	n := len(h.API.Main())
	p.Set(modelapi.NewScript(
		modelapi.Call("TaskList", nil),
		modelapi.Call("TaskCreate", map[string]any{"subject": "Release it"}),
		modelapi.Text("Four tasks."),
	))
	h.Run(t, "Go on.", "--session", a)
	main := since(h, n)
	require.Len(t, main, 3, h.API.Dump())
	assert.Equal(t, snapshot, main[0].Messages[0].Blocks[0].Text)
	for _, r := range main {
		assert.Equal(t, 1, strings.Count(r.ConversationText(), snapshot), "request %d: the list should be there once", r.Seq)
	}
	assert.Contains(t, result(t, main[1], "TaskList"), "#1 [completed] Write the parser\n#2 [pending] Test the parser\n#3 [pending] Ship it", "the store's order: taskid order")
	assert.Contains(t, result(t, main[2], "TaskCreate"), "#4 pending: Release it")
	assert.Len(t, h.API.Of(modelapi.KindCompact), 1, "no second compaction")

	// The database lost: the list is rebuilt from the session's messages,
	// those before the compaction too (OpenCode keeps them).
	h.Daemon.LoseDatabase(t)
	n = len(h.API.Main())
	p.Set(modelapi.NewScript(modelapi.Call("TaskList", nil), modelapi.Text("Four tasks still.")))
	h.Run(t, "Go on.", "--session", a)
	main = since(h, n)
	require.Len(t, main, 2, h.API.Dump())
	assert.Contains(t, result(t, main[1], "TaskList"), "#1 [completed] Write the parser\n#2 [pending] Test the parser\n#3 [pending] Ship it\n#4 [pending] Release it")
}

// TestSubagent ensures a subagent (OpenCode's task tool runs it in a child
// session) works on its parent's list: its TaskList shows the parent's
// tasks, its writes go to the parent's list (the plan stays one), and the
// parent then sees them; the daemon holds no session for the child.
func TestSubagent(t *testing.T) {
	t.Parallel()
	const prompt = "Review the plan and add what is missing."
	script := modelapi.NewScript(
		// the parent
		modelapi.Call("TaskCreate", map[string]any{"subject": "Write the parser"}),
		modelapi.Call("task", map[string]any{"description": "Review the plan", "prompt": prompt, "subagent_type": "general"}),
		// the subagent, inside the parent's task call
		modelapi.Call("TaskList", nil),
		modelapi.Call("TaskUpdate", map[string]any{"taskid": 1, "status": "inprogress"}),
		modelapi.Call("TaskCreate", map[string]any{"subject": "Review the parser"}),
		modelapi.Text("Reviewed: one task added."),
		// the parent again
		modelapi.Call("TaskList", nil),
		modelapi.Text("Done."),
	)
	h := opencode.New(t, opencode.Options{Respond: script.Respond})
	run := h.Run(t, "Plan the parser work.")
	require.True(t, script.Done(), h.API.Dump())
	main := h.API.Main()
	require.Len(t, main, 8, h.API.Dump())

	// The subagent's turns: a conversation of their own, from the prompt.
	child := main[2:6]
	for _, r := range child {
		assert.Equal(t, prompt, r.FirstUserText(), "request %d", r.Seq)
		assert.NotContains(t, r.ConversationText(), "Plan the parser work.")
	}
	assert.Contains(t, result(t, child[1], "TaskList"), "#1 [pending] Write the parser", "the subagent reads its parent's list")
	assert.Contains(t, result(t, child[2], "TaskUpdate"), "#1 inprogress: Write the parser")
	assert.Contains(t, result(t, child[3], "TaskCreate"), "#2 pending: Review the parser")

	// The parent gets the subagent's answer, then its own list holds the
	// subagent's changes.
	assert.Contains(t, result(t, main[6], "task"), "Reviewed: one task added.")
	assert.Contains(t, result(t, main[7], "TaskList"), "#1 [inprogress] Write the parser\n#2 [pending] Review the parser")

	// The child session is OpenCode's own; the daemon knows only the parent's.
	tasks := run.Tools("task")
	require.Len(t, tasks, 1)
	childID, _ := tasks[0].Metadata["sessionId"].(string)
	require.NotEmpty(t, childID, "the task tool's metadata names the child session: %v", tasks[0].Metadata)
	assert.NotEqual(t, run.SessionID, childID)
	_, err := h.Daemon.Client(t).GetSession(ctx10(t), childID)
	assert.Error(t, err, "the daemon has a session for the subagent's child session")
	assert.Equal(t, []string{"1 inprogress Write the parser", "2 pending Review the parser"}, h.Daemon.Subjects(t, run.SessionID))
}

// TestDaemonKilled ensures OpenCode started with no daemon running has the
// tools anyway and its first call starts the daemon (detached, on the
// configured socket and database); and that this daemon, killed hard
// (SIGKILL) between two runs, loses nothing: the next run's first call
// finds no daemon, the plugin starts another on the same socket and
// database, and the list goes on.
func TestDaemonKilled(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := opencode.New(t, opencode.Options{Respond: p.Respond, NoDaemon: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := client.Dial(ctx, h.Daemon.Socket)
	require.Error(t, err, "a daemon answers before the test started one")

	p.Set(modelapi.NewScript(modelapi.Call("TaskCreate", map[string]any{"subject": "One"}), modelapi.Text("Planned.")))
	a := h.Run(t, "Plan.").SessionID
	main := h.API.Main()
	require.Len(t, main, 2, h.API.Dump())
	for _, name := range taskTools {
		assert.True(t, main[0].HasTool(name), "%s not offered with no daemon running", name)
	}
	assert.Contains(t, result(t, main[1], "TaskCreate"), "#1 pending: One")
	before := h.Daemon.Status(t)
	assert.Equal(t, h.Daemon.DB, before.Database, "the plugin's daemon serves the configured database")
	assert.FileExists(t, h.Daemon.AutostartLog(), "the plugin's daemon logs beside the socket")

	require.NoError(t, syscall.Kill(before.PID, syscall.SIGKILL))
	harness.WaitFor(t, 5*time.Second, "the killed daemon to stop answering", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c, err := client.Dial(ctx, h.Daemon.Socket)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})

	n := len(h.API.Main())
	p.Set(modelapi.NewScript(
		modelapi.Call("TaskCreate", map[string]any{"subject": "Two"}),
		modelapi.Call("TaskList", nil),
		modelapi.Text("Still here."),
	))
	h.Run(t, "Go on.", "--session", a)
	main = since(h, n)
	require.Len(t, main, 3, h.API.Dump())
	assert.Contains(t, result(t, main[1], "TaskCreate"), "#2 pending: Two")
	assert.Contains(t, result(t, main[2], "TaskList"), "#1 [pending] One\n#2 [pending] Two")

	after := h.Daemon.Status(t)
	assert.NotEqual(t, before.PID, after.PID, "the killed daemon answers")
	assert.Equal(t, h.Daemon.DB, after.Database)
	assert.Equal(t, []string{"1 pending One", "2 pending Two"}, h.Daemon.Subjects(t, a))
}

// TestAutostartOff ensures TASKSESSIOND_AUTOSTART=0 keeps the plugin from
// starting a daemon: the call fails with an error the model reads, naming
// the setting, and no daemon answers afterwards.
//
// Its host is also the control for TestFourTools's todowrite check (to
// save an OpenCode run, some 10 CPU-seconds): without the installer's
// "tools" fragment, OpenCode 1.18.33 offers its own to-do tool beside the
// plugin's four.
func TestAutostartOff(t *testing.T) {
	t.Parallel()
	script := modelapi.NewScript(modelapi.Call("TaskList", nil), modelapi.Text("No list."))
	h := opencode.New(t, opencode.Options{Respond: script.Respond, NoDaemon: true, Env: []string{"TASKSESSIOND_AUTOSTART=0"}, KeepTodo: true})
	run := h.Run(t, "Plan.")
	main := h.API.Main()
	require.Len(t, main, 2, h.API.Dump())
	assert.True(t, main[0].HasTool("todowrite"), "without the fragment todowrite should be offered: %v", main[0].ToolNames())
	for _, name := range taskTools {
		assert.True(t, main[0].HasTool(name), "%s not offered: %v", name, main[0].ToolNames())
	}
	got := result(t, main[1], "TaskList")
	assert.Contains(t, got, "no daemon answers")
	assert.Contains(t, got, "TASKSESSIOND_AUTOSTART=0")
	calls := run.Tools("TaskList")
	require.Len(t, calls, 1)
	assert.Equal(t, "error", calls[0].Status, "OpenCode marks the call failed")
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := client.Dial(ctx, h.Daemon.Socket)
	assert.Error(t, err, "a daemon was started")
	_, err = os.Stat(h.Daemon.AutostartLog())
	assert.True(t, os.IsNotExist(err), "the plugin started a daemon: %v", err)
}

// TestCompactionLargeList ensures a compaction of a long list (300 tasks
// with 500-character descriptions, 100 of them completed: 170 KB whole)
// puts the list in front of the model within 9,500 characters, fitted as
// the hooks fit it (every open task's id, status and subject named, the
// completed ones folded), once in each request after it; and gives the
// summariser the same text, not the whole list.
func TestCompactionLargeList(t *testing.T) {
	t.Parallel()
	const budget = 9_500
	var p modelapi.Phases
	h := opencode.New(t, opencode.Options{Respond: p.Respond})
	p.Set(modelapi.NewScript(modelapi.Text("Hi.")))
	a := h.Run(t, "Hello.").SessionID
	h.Daemon.CreateTasks(t, a, 300, 500, "Task number %03d")
	for i := 1; i <= 100; i++ {
		h.Daemon.Call(t, a, "TaskUpdate", map[string]any{"taskid": i, "status": "completed"})
	}
	full := modelapi.Call("TaskGet", map[string]any{"taskid": 101})
	full.Usage = &modelapi.Usage{InputTokens: opencode.ContextLimit - 1000, OutputTokens: 10}
	n := len(h.API.Main())
	p.Set(modelapi.NewScript(full, modelapi.Call("TaskGet", map[string]any{"taskid": 102}), modelapi.Text("Done.")))
	h.Run(t, "Go on.", "--session", a)

	compacts := h.API.Of(modelapi.KindCompact)
	require.Len(t, compacts, 1, "OpenCode did not compact:\n%s", h.API.Dump())
	var after []*modelapi.Request
	for _, r := range since(h, n) {
		if r.Seq > compacts[0].Seq {
			after = append(after, r)
		}
	}
	require.Len(t, after, 2, h.API.Dump())
	m0 := after[0].Messages[0]
	require.NotEmpty(t, m0.Blocks)
	snapshot := m0.Blocks[0].Text
	t.Logf("after the compaction: the list %d characters; the first request %d bytes, the next %d; the summariser's prompt %d characters",
		len([]rune(snapshot)), len(after[0].Raw), len(after[1].Raw), len([]rune(compacts[0].LastUserText())))
	assert.True(t, strings.HasPrefix(snapshot, "Task list carried over"), "%.200q", snapshot)
	assert.LessOrEqual(t, len([]rune(snapshot)), budget)
	for i := 101; i <= 300; i++ {
		assert.Contains(t, snapshot, fmt.Sprintf("\n#%d [pending] Task number %03d", i, i), "open task #%d", i)
	}
	assert.Contains(t, snapshot, "#1–#100 completed")
	for _, r := range after {
		assert.Equal(t, 1, strings.Count(r.ConversationText(), snapshot), "request %d: the list should be there once", r.Seq)
	}
	prompt := compacts[0].LastUserText()
	assert.Contains(t, prompt, snapshot, "the summariser gets the fitted list")
	assert.NotContains(t, prompt, "Description of task 150", "the summariser does not get the whole list")
}

// TestForkAndLostDatabase ensures a session the daemon does not know is
// rebuilt from the OpenCode session's own messages and its subagents'
// (child sessions): a fork ("run --session A --fork", a new session whose
// history is a copy of A's) keeps the tasks it had at the fork point, its
// subagent's writes included, and goes on from there while A keeps its
// own; and A, after the database was moved away, has its list back.
func TestForkAndLostDatabase(t *testing.T) {
	t.Parallel()
	const prompt = "Start the parser and add its review."
	var p modelapi.Phases
	h := opencode.New(t, opencode.Options{Respond: p.Respond})
	plan := p.Set(modelapi.NewScript(
		modelapi.Call("TaskCreate", map[string]any{"subject": "Write the parser"}),
		modelapi.Call("TaskCreate", map[string]any{"subject": "Test the parser"}),
		modelapi.Call("task", map[string]any{"description": "Extend the plan", "prompt": prompt, "subagent_type": "general"}),
		// the subagent
		modelapi.Call("TaskUpdate", map[string]any{"taskid": 1, "status": "inprogress"}),
		modelapi.Call("TaskCreate", map[string]any{"subject": "Review the parser"}),
		modelapi.Text("Started #1, added #3."),
		// the parent
		modelapi.Text("Planned."),
	))
	a := h.Run(t, "Plan the parser work.").SessionID
	require.True(t, plan.Done(), h.API.Dump())
	want := []string{"1 inprogress Write the parser", "2 pending Test the parser", "3 pending Review the parser"}
	require.Equal(t, want, h.Daemon.Subjects(t, a))

	// The fork.
	n := len(h.API.Main())
	fork := p.Set(modelapi.NewScript(
		modelapi.Call("TaskList", nil),
		modelapi.Call("TaskCreate", map[string]any{"subject": "Ship it from the fork"}),
		modelapi.Text("Forked."),
	))
	f := h.Run(t, "Go on in a fork.", "--session", a, "--fork").SessionID
	require.True(t, fork.Done(), h.API.Dump())
	require.NotEqual(t, a, f, "--fork kept the session id")
	got := since(h, n)
	require.Len(t, got, 3, h.API.Dump())
	listed := result(t, got[1], "TaskList")
	t.Logf("the fork's TaskList: %q", listed)
	assert.Contains(t, listed, "#1 [inprogress] Write the parser\n#2 [pending] Test the parser\n#3 [pending] Review the parser")
	assert.Contains(t, result(t, got[2], "TaskCreate"), "#4 pending: Ship it from the fork")
	assert.Equal(t, append(want, "4 pending Ship it from the fork"), h.Daemon.Subjects(t, f))
	assert.Equal(t, want, h.Daemon.Subjects(t, a), "the source keeps its own list")

	// The database lost: A's list is rebuilt from its messages.
	h.Daemon.LoseDatabase(t)
	n = len(h.API.Main())
	back := p.Set(modelapi.NewScript(
		modelapi.Call("TaskList", nil),
		modelapi.Call("TaskCreate", map[string]any{"subject": "Ship it"}),
		modelapi.Text("Back."),
	))
	h.Run(t, "Go on.", "--session", a)
	require.True(t, back.Done(), h.API.Dump())
	got = since(h, n)
	require.Len(t, got, 3, h.API.Dump())
	listed = result(t, got[1], "TaskList")
	t.Logf("after the database was lost, TaskList: %q", listed)
	assert.Contains(t, listed, "#1 [inprogress] Write the parser\n#2 [pending] Test the parser\n#3 [pending] Review the parser")
	assert.Contains(t, result(t, got[2], "TaskCreate"), "#4 pending: Ship it")
	assert.Equal(t, append(want, "4 pending Ship it"), h.Daemon.Subjects(t, a))
}
