package opencode_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/codex"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/opencode"
)

// TestHandoffFromCodex ensures a named session carries a list from Codex
// to OpenCode on one daemon: Codex, its bridge given "--session NAME
// --create" (and its hook "--session NAME"), plans two tasks; OpenCode,
// with TASKSESSIOND_SESSION=NAME where it runs, gets them from TaskList,
// its TaskCreate gets #3, and the daemon holds all three in NAME, nothing
// under the OpenCode session's own id. Then a compaction in another
// OpenCode session compacts NAME's head (successor "NAME/<compaction
// message>"), and a later process finds that head (sessions/get headId):
// its TaskCreate gets #5.
func TestHandoffFromCodex(t *testing.T) {
	t.Parallel()
	const name = "e2e-handoff-opencode"

	// Codex plans two tasks in NAME.
	var cp modelapi.Phases
	ch := codex.New(t, codex.Options{Respond: cp.Respond,
		Session: name})
	cp.Set(modelapi.NewScript(
		modelapi.Call(modelapi.ToolSearch, map[string]any{"query": "TaskCreate TaskList TaskGet TaskUpdate task list", "limit": 8}),
		modelapi.Call("mcp__tasks__TaskCreate", map[string]any{"subject": "Write the parser"}),
		modelapi.Call("mcp__tasks__TaskCreate", map[string]any{"subject": "Test the parser"}),
		modelapi.Text("Planned."),
	))
	// OpenCode, on the same daemon, bound to NAME (its first run below).
	var p modelapi.Phases
	h := opencode.New(t, opencode.Options{Respond: p.Respond, Daemon: ch.Daemon, Session: name})
	thread := ch.Exec(t, "Plan the parser work.").ThreadID
	c := ch.Daemon.Client(t)
	two := []string{"1 pending Write the parser", "2 pending Test the parser"}
	require.Equal(t, two, h.Daemon.Subjects(t, name), ch.API.Dump())
	_, err := c.Head(ctx10(t), thread)
	require.Error(t, err, "a session was made for the Codex thread though the bridge is bound to %s", name)

	p.Set(modelapi.NewScript(
		modelapi.Call("TaskList", nil),
		modelapi.Call("TaskCreate", map[string]any{"subject": "Ship it"}),
		modelapi.Text("Three."),
	))
	a := h.Run(t, "Where are we?").SessionID
	main := h.API.Main()
	require.Len(t, main, 3, h.API.Dump())
	assert.Contains(t, result(t, main[1], "TaskList"), "#1 [pending] Write the parser\n#2 [pending] Test the parser")
	assert.Contains(t, result(t, main[2], "TaskCreate"), "#3 pending: Ship it")
	three := append(append([]string(nil), two...), "3 pending Ship it")
	assert.Equal(t, three, h.Daemon.Subjects(t, name))
	_, err = c.Head(ctx10(t), a)
	assert.Error(t, err, "a session was made for OpenCode session %s though TASKSESSIOND_SESSION is %s", a, name)

	// Another OpenCode session on NAME compacts in the middle of its turn:
	// the plugin compacts NAME's head.
	n := len(h.API.Main())
	full := modelapi.Call("TaskCreate", map[string]any{"subject": "Tag the release"})
	full.Usage = &modelapi.Usage{InputTokens: opencode.ContextLimit - 1000, OutputTokens: 10}
	p.Set(modelapi.NewScript(full, modelapi.Text("Tagged.")))
	run := h.Run(t, "Tag it.")
	b := run.SessionID
	require.NotEqual(t, a, b)
	require.Len(t, h.API.Of(modelapi.KindCompact), 1, "OpenCode did not compact:\n%s", h.API.Dump())
	created := run.Tools("TaskCreate")
	require.Len(t, created, 1)
	assert.Contains(t, created[0].Output, "#4 pending: Tag the release")
	root, err := c.GetSession(ctx10(t), name)
	require.NoError(t, err)
	assert.Equal(t, "compacted", root.Status)
	require.True(t, strings.HasPrefix(root.HeadID, name+"/msg_"), "the successor's id: %s", root.HeadID)
	snap := h.Daemon.Resume(t, name)
	assert.Equal(t, root.HeadID, snap.Session.ID)
	require.NotEmpty(t, snap.Messages)
	snapshot := snap.Messages[0].Content
	assert.Contains(t, snapshot, "#4 [pending] Tag the release")
	// After the compaction the model reads the named list, in OpenCode's
	// compaction message.
	after := since(h, n)
	require.Len(t, after, 2, h.API.Dump())
	require.NotEmpty(t, after[1].Messages, h.API.Dump())
	require.NotEmpty(t, after[1].Messages[0].Blocks, h.API.Dump())
	assert.Equal(t, snapshot, after[1].Messages[0].Blocks[0].Text)

	// A later process, a new session: it finds NAME's head.
	n = len(h.API.Main())
	p.Set(modelapi.NewScript(
		modelapi.Call("TaskCreate", map[string]any{"subject": "Announce it"}),
		modelapi.Text("Five."),
	))
	d := h.Run(t, "Announce it.").SessionID
	after = since(h, n)
	require.Len(t, after, 2, h.API.Dump())
	assert.Contains(t, result(t, after[1], "TaskCreate"), "#5 pending: Announce it")
	assert.Equal(t, append(three, "4 pending Tag the release", "5 pending Announce it"), h.Daemon.Subjects(t, name))
	for _, id := range []string{b, d} {
		_, err := c.Head(ctx10(t), id)
		assert.Error(t, err, "a session was made for OpenCode session %s", id)
	}
}
