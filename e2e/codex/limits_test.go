package codex_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/codex"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// maxHookChars is what the hook promises to stay within. Codex keeps a
// hook's text whole up to 2,500 approximate tokens (about 10,000 bytes),
// and replaces a longer one with a head-and-tail preview and "Full hook
// output saved to: <file>" (codex-rs/hooks/src/output_spill.rs,
// HOOK_OUTPUT_TOKEN_LIMIT).
const maxHookChars = 9_500

// maxResultChars bounds a structured tool result; Codex truncates a tool
// output over the model's truncation policy (gpt-5.5: 10,000 tokens,
// about 40,000 bytes) in the middle ("…N tokens truncated…").
const maxResultChars = 40_000

// replaced are the forms in which Codex hands the model something too
// large instead of the thing itself.
var replaced = []string{"Full hook output saved to", "Warning: truncated output", "tokens truncated", "chars truncated", "hook_outputs/"}

func assertWhole(t *testing.T, what, text string) bool {
	t.Helper()
	for _, s := range replaced {
		if i := strings.Index(text, s); i >= 0 {
			from := max(0, i-300)
			t.Errorf("%s reached the model shortened by Codex (%q, %d bytes): %.300q ... %q", what, s, len(text), text, text[from:min(len(text), i+300)])
			return false
		}
	}
	return true
}

// TestLargeListHookContext ensures a long list (400 open tasks with
// 200-character descriptions, made through the daemon's client, more than
// fits) reaches the model whole after a resume: the hook's context is
// within 9,500 characters, is not replaced by Codex's preview, and names
// or counts every open task.
func TestLargeListHookContext(t *testing.T) {
	t.Parallel()
	largeListHookContext(t, "Task number %03d")
}

// TestLargeListHookContextNonASCII is TestLargeListHookContext with
// subjects in French: Codex counts a hook's text in bytes (about 4 a
// token), so 9,500 characters of accented text can be over its 2,500
// tokens.
func TestLargeListHookContextNonASCII(t *testing.T) {
	t.Parallel()
	largeListHookContext(t, "Tâche numéro %03d : vérifier l’élément « données »")
}

func largeListHookContext(t *testing.T, subject string) {
	var p modelapi.Phases
	h := codex.New(t, codex.Options{Respond: p.Respond})
	p.Set(modelapi.NewScript(modelapi.Text("Hi.")))
	a := h.Exec(t, "Hello.").ThreadID
	const n = 400
	createTasksNamed(t, h.Daemon, a, n, 200, subject)

	p.Set(modelapi.NewScript(modelapi.Text("Seen.")))
	h.Resume(t, a, "Status?")
	hook := lastHook(t, h)
	require.Equal(t, "resume", hook.Source)
	assert.LessOrEqual(t, len([]rune(hook.Context)), maxHookChars, "the hook's context")
	t.Logf("the hook's context: %d characters, %d bytes", len([]rune(hook.Context)), len(hook.Context))
	var got string
	for _, s := range developerTexts(h.API.LastMain(t)) {
		if strings.Contains(s, "#1 [pending]") || strings.Contains(s, "Full hook output saved to") {
			got = s
		}
	}
	require.NotEmpty(t, got, "no hook context reached the model")
	if !assertWhole(t, "the hook context", got) {
		return
	}
	assert.Equal(t, hook.Context, got, "the hook's context did not reach the model verbatim")
	// Every open task is named, or counted among those left out.
	named := 0
	for i := 1; i <= n; i++ {
		if strings.Contains(got, fmt.Sprintf("\n#%d [pending] ", i)) {
			named++
		}
	}
	left := 0
	fmt.Sscanf(got[max(0, strings.Index(got, "… and ")):], "… and %d more open tasks", &left)
	assert.Equal(t, n, named+left, "open tasks named (%d) and left out (%d)", named, left)
	t.Logf("the hook named %d open tasks and said %d more were left out", named, left)
}

// TestLargeTaskList ensures a TaskList of 40 tasks with 2,000-character
// descriptions (80,000 characters of descriptions) reaches the model as
// the tool's own result, within 40,000 characters, not truncated by
// Codex, with the counts near its start.
func TestLargeTaskList(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := codex.New(t, codex.Options{Respond: p.Respond})
	p.Set(modelapi.NewScript(modelapi.Text("Hi.")))
	a := h.Exec(t, "Hello.").ThreadID
	createTasks(t, h.Daemon, a, 40, 2000)
	n := len(h.API.Main())
	p.Set(modelapi.NewScript(loadTools, modelapi.Call(taskList, nil), modelapi.Text("Listed.")))
	h.Resume(t, a, "List.")
	main := since(h, n)
	require.Len(t, main, 3, h.API.Dump())
	res := pending(t, main[2])
	assertWhole(t, "the TaskList result", res.Text)
	text := codex.ToolOutput(res)
	t.Logf("the TaskList result that reached the model: %d characters, starting %.300q", len(text), text)
	assert.LessOrEqual(t, len(text), maxResultChars)
	assert.True(t, strings.HasPrefix(text, "Tasks: 40 pending."), "the counts first: %.80q", text)
	assert.Len(t, toolJSON(t, res)["tasks"], 40, "every task is listed (descriptions may be shortened)")
}

// TestLargeTaskListUnknownModel ensures a TaskList of 300 tasks with
// 500-character descriptions (120 closed, 180 open) reaches the model
// whole under a model outside Codex's catalog, whose tool output Codex
// cuts in the middle past 10,000 bytes (its fallback truncation policy):
// the result is within that, the counts come first, then the tasks in
// taskid order: the closed ones folded in place, every open one named.
func TestLargeTaskListUnknownModel(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := codex.New(t, codex.Options{Respond: p.Respond, Model: "e2e-custom-model"})
	p.Set(modelapi.NewScript(modelapi.Text("Hi.")))
	a := h.Exec(t, "Hello.").ThreadID
	createTasks(t, h.Daemon, a, 300, 500)
	for i := 1; i <= 120; i++ {
		h.Daemon.Call(t, a, "TaskUpdate", map[string]any{"taskid": i, "status": "completed"})
	}
	n := len(h.API.Main())
	// Outside the catalog the MCP tools are offered as they are (no
	// tool_search), under their namespaced names.
	p.Set(modelapi.NewScript(modelapi.Call(taskList, nil), modelapi.Text("Listed.")))
	h.Resume(t, a, "List.")
	main := since(h, n)
	require.Len(t, main, 2, h.API.Dump())
	res := pending(t, main[1])
	text := codex.ToolOutput(res)
	t.Logf("the TaskList result that reached the model: %d bytes (%d with Codex's header), starting %.300q", len(text), len(res.Text), text)
	if !assertWhole(t, "the TaskList result", res.Text) {
		return
	}
	assert.LessOrEqual(t, len(res.Text), 10_000, "Codex's budget for a model outside its catalog")
	assert.True(t, strings.HasPrefix(text, "Tasks: 180 pending, 120 completed."), "the counts first: %.80q", text)
	last := strings.Index(text, "\n#1–#120 completed\n")
	assert.GreaterOrEqual(t, last, 0, "the closed tasks, folded in place")
	for id := 121; id <= 300; id++ {
		at := strings.Index(text, fmt.Sprintf("#%d [pending] Task number %03d", id, id))
		if !assert.GreaterOrEqual(t, at, 0, "open task #%d is not named", id) {
			continue
		}
		assert.Greater(t, at, last, "open task #%d out of order", id)
		last = at
	}
}
