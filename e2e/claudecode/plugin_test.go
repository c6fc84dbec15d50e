package claudecode_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// The Task tools as Claude Code names a plugin's:
// mcp__plugin_tasksessiond_tasks__TaskCreate.
var (
	pCreate = claudecode.PluginPrefix + "TaskCreate"
	pList   = claudecode.PluginPrefix + "TaskList"
	pGet    = claudecode.PluginPrefix + "TaskGet"
	pUpdate = claudecode.PluginPrefix + "TaskUpdate"
)

var pLoad = modelapi.Call("ToolSearch", map[string]any{
	"query": "select:" + strings.Join([]string{pCreate, pList, pGet, pUpdate}, ","), "max_results": 5,
})

// TestPluginLifecycle ensures the repository's plugin, installed with
// "claude plugin install tasksessiond --marketplace <repo>", gives the
// model the four tools under the plugin's names, with no allow rule (its
// PreToolUse hook allows them; claude -p would refuse them otherwise), and
// keeps the list through the lifecycle: startup (the list named by Claude
// Code's id), resume (the hook's list, naming the tools as the plugin
// names them, and the next id), and compaction (claude -p /compact
// --resume: the daemon session compacted, the list beside the summary,
// the ids going on).
func TestPluginLifecycle(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := claudecode.UsePlugin(t, claudecode.New(t, claudecode.Options{Respond: p.Respond, NoHook: true}))
	id := uuid.NewString()

	// startup
	start := p.Set(modelapi.NewScript(
		pLoad,
		modelapi.Call(pCreate, map[string]any{"subject": "Write the parser"}),
		modelapi.Call(pUpdate, map[string]any{"taskid": 1, "status": "in_progress"}),
		modelapi.Call(pCreate, map[string]any{"subject": "Test the parser"}),
		modelapi.Call(pGet, map[string]any{"taskid": 2}),
		modelapi.Text("Planned."),
	))
	res := h.Print(t, "Plan the parser work.", "--session-id", id)
	require.True(t, start.Done(), h.API.Dump())
	assert.Equal(t, "Planned.", res.Result)
	main := h.API.Main()
	require.Len(t, main, 6, h.API.Dump())
	for _, name := range []string{pCreate, pList, pGet, pUpdate} {
		assert.True(t, main[1].HasTool(name), "%s not offered after ToolSearch", name)
	}
	created := toolJSON(t, main[2].PendingToolResults()[0])
	assert.Contains(t, created["message"], "#1")
	got := toolJSON(t, main[5].PendingToolResults()[0])
	assert.Equal(t, "Test the parser", got["task"].(map[string]any)["subject"])
	assert.Equal(t, []string{"1 inprogress Write the parser", "2 pending Test the parser"}, h.Daemon.Subjects(t, id))
	runs := strings.Join(h.Runs(), "\n")
	assert.Contains(t, runs, "hook claude-code --server "+claudecode.PluginServer, "the plugin's SessionStart hook")
	assert.Contains(t, runs, "mcp", "the plugin's MCP server")

	// resume: the hook's list names the tools as the plugin names them.
	n := len(h.API.Main())
	resumed := p.Set(modelapi.NewScript(
		modelapi.Call(pList, nil),
		modelapi.Call(pCreate, map[string]any{"subject": "Ship it"}),
		modelapi.Text("Three now."),
	))
	h.Print(t, "Where are we?", "--resume", id)
	require.True(t, resumed.Done(), h.API.Dump())
	main = since(h.Host, n)
	require.Len(t, main, 3, h.API.Dump())
	ctx := hookContexts(main[0])
	require.NotEmpty(t, ctx, "no hook context in the resumed turn")
	assert.Contains(t, ctx[len(ctx)-1], "Write the parser")
	assert.Contains(t, ctx[len(ctx)-1], claudecode.PluginPrefix, "the hook's text must name the tools as the plugin names them")
	assert.NotContains(t, ctx[len(ctx)-1], "mcp__tasks__", "the hook's text names the tools of a server that is not there")
	listed := toolJSON(t, main[1].PendingToolResults()[0])
	assert.Equal(t, []string{"1 inprogress Write the parser", "2 pending Test the parser"}, tasksOf(t, listed))
	created = toolJSON(t, main[2].PendingToolResults()[0])
	assert.Contains(t, created["message"], "#3")

	// compaction
	n = len(h.API.Main())
	h.Print(t, "/compact", "--resume", id)
	s := h.Daemon.Resume(t, id)
	assert.NotEqual(t, id, s.Session.ID, "the daemon session was not compacted")
	require.Len(t, s.Tasks, 3)
	after := p.Set(modelapi.NewScript(
		modelapi.Call(pCreate, map[string]any{"subject": "Review it"}),
		modelapi.Text("Four now."),
	))
	h.Print(t, "Go on.", "--resume", id)
	require.True(t, after.Done(), h.API.Dump())
	main = since(h.Host, n)
	last := main[len(main)-1]
	assert.Contains(t, last.ConversationText(), "Ship it", "the list is not beside the summary after compaction")
	created = toolJSON(t, last.PendingToolResults()[0])
	assert.Contains(t, created["message"], "#4")
	assert.Equal(t, []string{"1 inprogress Write the parser", "2 pending Test the parser", "3 pending Ship it", "4 pending Review it"},
		h.Daemon.Subjects(t, id))
}

// TestPluginClear ensures /clear under the plugin starts the new
// conversation's list empty (the plugin's hook tells the plugin's bridge,
// which Claude Code keeps through /clear, of the new id) while the old
// conversation keeps its own.
func TestPluginClear(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := claudecode.UsePlugin(t, claudecode.New(t, claudecode.Options{Respond: p.Respond, NoHook: true}))
	a := uuid.NewString()
	term := h.Interactive(t, "--session-id", a)

	p.Set(modelapi.NewScript(
		pLoad,
		modelapi.Call(pCreate, map[string]any{"subject": "A one"}),
		modelapi.Text("A planned."),
	))
	term.Submit("Plan A.")
	term.WaitForText(30*time.Second, "A planned.")
	require.Equal(t, []string{"1 pending A one"}, h.Daemon.Subjects(t, a))

	term.Submit("/clear")
	harness.WaitFor(t, 20*time.Second, "the plugin's SessionStart hook run for /clear", func() bool {
		hooks := 0
		for _, r := range h.Runs() {
			if strings.HasPrefix(r, "hook ") {
				hooks++
			}
		}
		return hooks >= 2 // startup, clear
	})
	n := len(h.API.Main())
	after := p.Set(modelapi.NewScript(
		pLoad,
		modelapi.Call(pList, nil),
		modelapi.Call(pCreate, map[string]any{"subject": "B one"}),
		modelapi.Text("B planned."),
	))
	term.Submit("Plan B.")
	term.WaitForText(30*time.Second, "B planned.")
	require.True(t, after.Done(), h.API.Dump())
	main := since(h.Host, n)
	require.Len(t, main, 4, h.API.Dump())
	assert.Empty(t, tasksOf(t, toolJSON(t, main[2].PendingToolResults()[0])), "TaskList after /clear: the new conversation's list must be empty")
	assert.Contains(t, toolJSON(t, main[3].PendingToolResults()[0])["message"], "#1", "TaskCreate after /clear")
	assert.Equal(t, []string{"1 pending A one"}, h.Daemon.Subjects(t, a), "A's list in the daemon")
}

// TestPluginRefusesClaudeCodesOwnTodoTools ensures the plugin keeps the
// model to one list as setup does: Claude Code's own TaskCreate, offered
// beside the plugin's (a plugin cannot ship the deny rules that take it
// out of the offer), is refused by the plugin's PreToolUse hook with a
// reason naming the plugin's tools, and the plugin's own TaskCreate, which
// shares its name, still runs.
func TestPluginRefusesClaudeCodesOwnTodoTools(t *testing.T) {
	t.Parallel()
	script := modelapi.NewScript(
		modelapi.Call("ToolSearch", map[string]any{"query": "select:TaskCreate", "max_results": 5}),
		modelapi.Call("TaskCreate", map[string]any{"subject": "Own list", "description": "Claude Code's own"}),
		pLoad,
		modelapi.Call(pCreate, map[string]any{"subject": "Ours"}),
		modelapi.Text("Planned."),
	)
	h := claudecode.UsePlugin(t, claudecode.New(t, claudecode.Options{Respond: script.Respond, NoHook: true}))
	id := uuid.NewString()
	h.Print(t, "Plan the parser work.", "--session-id", id)
	require.True(t, script.Done(), h.API.Dump())
	main := h.API.Main()
	require.Len(t, main, 5, h.API.Dump())
	assert.True(t, main[1].HasTool("TaskCreate"), "Claude Code's own TaskCreate is not offered: the test shows nothing")
	own := main[2].PendingToolResults()
	require.Len(t, own, 1)
	assert.True(t, own[0].IsError, "Claude Code's own TaskCreate ran under the plugin: %s", own[0].Text)
	assert.Contains(t, own[0].Text, "use "+pCreate, "the refusal names the plugin's tools")
	created := toolJSON(t, main[4].PendingToolResults()[0])
	assert.Contains(t, created["message"], "#1")
	assert.Equal(t, []string{"1 pending Ours"}, h.Daemon.Subjects(t, id))
}

// TestDoctorAgreesOnThePlugin ensures the plugin, installed with the
// pinned CLI, is "set up" by doctor (by the plugin), as "claude mcp list"
// shows its server; that setup refuses to add its own beside it, changing
// nothing (Claude Code would then show only setup's server, the plugin's
// hidden); and that a deny rule for the plugin's server is reported.
func TestDoctorAgreesOnThePlugin(t *testing.T) {
	t.Parallel()
	h := claudecode.UsePlugin(t, claudecode.New(t, claudecode.Options{NoHook: true}))
	doctor := func() (string, error) {
		return h.RunTSD([]string{"doctor", "claude-code", "--socket", h.Daemon.Socket, "--db", h.Daemon.DB, "--bin", h.Rec.Bin})
	}
	list := h.Command(t, 60*time.Second, "mcp", "list")
	require.NoError(t, list.Err, "%s%s", list.Stdout, list.Stderr)
	assert.Contains(t, list.Stdout, "plugin:"+claudecode.Plugin+":tasks")
	out, err := doctor()
	assert.NoError(t, err, out)
	assert.Contains(t, out, "Claude Code: set up (by the plugin "+claudecode.Plugin+"@")

	settings := filepath.Join(h.Config, "settings.json")
	before := read(t, settings)
	out, err = h.RunTSD([]string{"setup", "claude-code", "--bin", h.Rec.Bin})
	assert.Error(t, err, out)
	assert.Contains(t, out, "the plugin "+claudecode.Plugin+"@")
	assert.Equal(t, before, read(t, settings), "setup beside the plugin changed settings.json")

	var s map[string]any
	require.NoError(t, json.Unmarshal([]byte(before), &s))
	s["permissions"] = map[string]any{"deny": []string{"mcp__" + claudecode.PluginServer}}
	h.WriteJSON(settings, s)
	out, err = doctor()
	assert.Error(t, err, out)
	assert.Contains(t, out, `the deny rule "mcp__`+claudecode.PluginServer+`" in `+settings)
}
