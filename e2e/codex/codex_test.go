package codex_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/codex"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

// The MCP tools as the model calls them: Codex offers the server's tools
// in the namespace mcp__tasks, and the view joins the two.
const (
	taskCreate = "mcp__tasks__TaskCreate"
	taskList   = "mcp__tasks__TaskList"
	taskGet    = "mcp__tasks__TaskGet"
	taskUpdate = "mcp__tasks__TaskUpdate"
)

// loadTools is the model's first move, and its first move after each
// compaction: Codex 0.169 defers MCP tools for every model of its catalog
// (supports_search_tool), naming the namespace in a developer message
// ("Deferred tool namespaces: - mcp__tasks: ..."), and the model loads
// them with the client-executed tool_search tool; the tool_search_output
// that answers it holds the namespace with the bridge's schemas.
var loadTools = modelapi.Call(modelapi.ToolSearch, map[string]any{"query": "TaskCreate TaskList TaskGet TaskUpdate task list", "limit": 8})

// since returns the main requests after the first n.
func since(h *codex.Host, n int) []*modelapi.Request { return h.API.Main()[n:] }

// toolJSON reads a Task tool result as the model read it (its text: the
// bridge sends no structured result) into the fields the tests assert on
// (harness.ResultFields).
func toolJSON(t *testing.T, b modelapi.Block) map[string]any {
	t.Helper()
	require.False(t, b.IsError, "%s returned an error result: %s", b.Name, b.Text)
	return harness.ResultFields(codex.ToolOutput(b))
}

// tasksOf returns "taskid status subject" for each task of a TaskList result.
func tasksOf(t *testing.T, v map[string]any) []string {
	t.Helper()
	list, ok := v["tasks"].([]any)
	require.True(t, ok, "no tasks in %v", v)
	out := []string{}
	for _, x := range list {
		task := x.(map[string]any)
		out = append(out, fmt.Sprintf("%v %s %s", task["taskid"], task["status"], task["subject"]))
	}
	return out
}

// pending returns the one tool result of a request's last user message.
func pending(t *testing.T, r *modelapi.Request) modelapi.Block {
	t.Helper()
	res := r.PendingToolResults()
	require.Len(t, res, 1, "request %d: pending tool results", r.Seq)
	return res[0]
}

var markerRE = regexp.MustCompile(`\(tasksessiond session ([^,]+), list ([0-9a-f]+)\)`)

// markers returns every hook marker in what the request shows the model.
func markers(r *modelapi.Request) []string { return markerRE.FindAllString(r.ConversationText(), -1) }

// developerTexts returns the texts of the request's developer messages:
// where Codex puts a SessionStart hook's additionalContext (a developer
// message of its own, before the user's prompt; after a compaction, after
// the summary).
func developerTexts(r *modelapi.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role != "developer" {
			continue
		}
		for _, b := range m.Blocks {
			if b.Type == modelapi.BlockText {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

// hookContexts returns the developer messages that hold a hook's list (by its marker).
func hookContexts(r *modelapi.Request) []string {
	var out []string
	for _, s := range developerTexts(r) {
		if markerRE.MatchString(s) {
			out = append(out, s)
		}
	}
	return out
}

// lastHook returns the last hook run; it fails the test if there is none.
func lastHook(t *testing.T, h *codex.Host) codex.HookRun {
	t.Helper()
	runs := h.Hooks()
	require.NotEmpty(t, runs, "the SessionStart hook never ran (is it trusted? see codex.HookTrustHash)")
	return runs[len(runs)-1]
}

// hookOf returns the last hook run of a source.
func hookOf(t *testing.T, h *codex.Host, source string) codex.HookRun {
	t.Helper()
	var run codex.HookRun
	for _, r := range h.Hooks() {
		if r.Source == source {
			run = r
		}
	}
	require.Equal(t, source, run.Source, "no SessionStart hook ran with source %s: %+v", source, h.Hooks())
	return run
}

// createTasks creates n tasks in session id through the daemon's client,
// not through the model (fast), with descriptions of descLen characters.
func createTasks(t *testing.T, d *harness.Daemon, id string, n, descLen int) {
	t.Helper()
	createTasksNamed(t, d, id, n, descLen, "Task number %03d")
}

// createTasksNamed is createTasks with the subjects given by a format of the task's number.
func createTasksNamed(t *testing.T, d *harness.Daemon, id string, n, descLen int, subject string) {
	t.Helper()
	d.CreateTasks(t, id, n, descLen, subject)
}

// TestFourTools ensures each Task tool called by the model through the MCP
// bridge reaches the daemon, and each result reaches the model in the next
// request; that the tasks live in the daemon session named by the Codex
// thread id (the bridge binds each call to the thread its _meta names);
// and that Codex gives the bridge only its env allow-list plus the
// server's env from config.toml.
func TestFourTools(t *testing.T) {
	t.Parallel()
	script := modelapi.NewScript(
		loadTools,
		modelapi.Call(taskCreate, map[string]any{"subject": "Write the parser"}),
		modelapi.Call(taskCreate, map[string]any{"subject": "Test the parser", "description": "fuzz it too"}),
		modelapi.Call(taskUpdate, map[string]any{"taskid": 1, "status": "in_progress"}),
		modelapi.Call(taskGet, map[string]any{"taskid": "#2"}),
		modelapi.Call(taskList, nil),
		modelapi.Text("Two tasks planned."),
	)
	h := codex.New(t, codex.Options{Respond: script.Respond})
	// Set in codex's own environment: the bridge must not see them.
	h.ExtraEnv = []string{"TASKSESSIOND_SESSION=leaked-session", "TASKSESSIOND_AUTOSTART=0"}

	res := h.Exec(t, "Plan the parser work.")
	assert.Equal(t, "Two tasks planned.", res.Message)
	require.True(t, script.Done(), "the script was not played to its end:\n%s", h.API.Dump())
	assert.Empty(t, h.API.Unscripted())
	assert.Empty(t, res.Errors)

	main := h.API.Main()
	require.Len(t, main, 7, h.API.Dump())
	assert.Contains(t, main[0].LastUserText(), "Plan the parser work.")

	// The tools are deferred: named in a developer message, loaded by
	// tool_search, whose output holds the namespace with the bridge's
	// schemas; from then on the request offers them.
	// The namespace is named without a description: the bridge sends no
	// instructions (the tools' descriptions say it, in every request).
	assert.Contains(t, strings.Join(developerTexts(main[0]), "\n"), "- mcp__tasks\n")
	assert.True(t, main[0].HasTool(modelapi.ToolSearch))
	found := pending(t, main[1])
	assert.Equal(t, modelapi.ToolSearch, found.Name)
	for _, name := range []string{taskCreate, taskList, taskGet, taskUpdate} {
		assert.False(t, main[0].HasTool(name), "%s offered before tool_search", name)
		assert.True(t, main[1].HasTool(name), "%s not offered after tool_search", name)
	}
	create, _ := main[1].Tool(taskCreate)
	assert.Contains(t, string(create.InputSchema), `"subject"`)

	// Each call's result is in the very next request; the model reads the
	// result's structuredContent as JSON, after "Wall time: ...".
	for i, want := range []string{taskCreate, taskCreate, taskUpdate, taskGet, taskList} {
		got := pending(t, main[i+2])
		assert.Equal(t, want, got.Name, "request %d", main[i+2].Seq)
		assert.True(t, strings.HasPrefix(got.Text, "Wall time: "), "request %d: %.100q", main[i+2].Seq, got.Text)
	}
	last := main[len(main)-1]
	created := last.ToolResults(taskCreate)
	require.Len(t, created, 2)
	first, second := toolJSON(t, created[0]), toolJSON(t, created[1])
	assert.Contains(t, first["message"], "#1")
	assert.Contains(t, second["message"], "#2")
	assert.Equal(t, "Write the parser", first["task"].(map[string]any)["subject"])
	updated := toolJSON(t, last.ToolResults(taskUpdate)[0])
	assert.Equal(t, "inprogress", updated["task"].(map[string]any)["status"])
	got := toolJSON(t, last.ToolResults(taskGet)[0])
	assert.Equal(t, "fuzz it too", got["task"].(map[string]any)["description"])
	listed := toolJSON(t, last.ToolResults(taskList)[0])
	assert.Equal(t, []string{"1 inprogress Write the parser", "2 pending Test the parser"}, tasksOf(t, listed))

	// The daemon holds them in the session named by the thread id.
	s := h.Daemon.Resume(t, res.ThreadID)
	assert.Equal(t, res.ThreadID, s.Session.ID)
	require.Len(t, s.Tasks, 2)
	assert.Equal(t, 3, s.NextTaskid)

	// The startup hook ran, for this thread, and added nothing.
	hook := lastHook(t, h)
	assert.Equal(t, "startup", hook.Source)
	assert.Equal(t, "SessionStart", hook.Event)
	assert.Equal(t, res.ThreadID, hook.SessionID)
	assert.Empty(t, hook.Context)
	assert.Equal(t, h.Rollout(res.ThreadID), hook.TranscriptPath, "the hook's transcript_path is the thread's rollout")

	// One bridge, with the config's env and not codex's own TASKSESSIOND_*.
	servers := h.MCPServers()
	require.Len(t, servers, 1)
	assert.Equal(t, h.Daemon.Socket, servers[0].Socket)
	assert.Equal(t, h.Daemon.DB, servers[0].DB)
	assert.NotContains(t, h.MCPEnv(), "leaked-session", "Codex passed its own TASKSESSIOND_SESSION to the MCP server")
	assert.NotContains(t, h.MCPEnv(), "TASKSESSIOND_AUTOSTART", "Codex passed its own TASKSESSIOND_AUTOSTART to the MCP server")
	assert.Contains(t, hook.Env, "TASKSESSIOND_SESSION=leaked-session", "hooks get codex's whole environment")
}
