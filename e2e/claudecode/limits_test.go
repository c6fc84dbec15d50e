package claudecode_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// maxHookChars is what the hook promises to stay within; Claude Code
// replaces a hook's context over 10,000 characters with a preview.
const maxHookChars = 9_500

// maxResultChars is what a structured tool result is bounded to; Claude
// Code replaces a larger one with a preview and a file path.
const maxResultChars = 40_000

// jsLen counts s as Claude Code (JavaScript) does: UTF-16 code units.
func jsLen(s string) int { return len(utf16.Encode([]rune(s))) }

// TestLargeListHookContext ensures a long list (200 open tasks with
// 200-character descriptions, made through the daemon's client) reaches
// the model whole, within 9,500 characters, after a resume and after
// /compact: not replaced by Claude Code's preview form, naming every open
// task's id.
func TestLargeListHookContext(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := claudecode.New(t, claudecode.Options{Respond: p.Respond})
	a := uuid.NewString()
	p.Set(modelapi.NewScript(modelapi.Text("Hi.")))
	h.Print(t, "Hello.", "--session-id", a)
	createTasks(t, h, a, 200, 200)

	check := func(what string, hook claudecode.HookRun, r *modelapi.Request) {
		t.Helper()
		assert.LessOrEqual(t, jsLen(hook.Context), maxHookChars, "%s: the hook's context", what)
		ctx := hookContexts(r)
		require.NotEmpty(t, ctx, "%s: no hook context reached the model", what)
		got := ctx[len(ctx)-1]
		assertWhole(t, what+": the hook context", got)
		assert.Contains(t, got, hook.Context, "%s: the hook's context did not reach the model verbatim", what)
		for i := 1; i <= 200; i++ {
			if !strings.Contains(got, fmt.Sprintf("#%d [pending]", i)) {
				t.Errorf("%s: open task #%d is not in the hook context that reached the model (%d characters; the hook's own context is %d):\n%s",
					what, i, jsLen(got), jsLen(hook.Context), got)
				break
			}
		}
	}

	p.Set(modelapi.NewScript(modelapi.Text("Seen.")))
	h.Print(t, "Status?", "--resume", a)
	hook := lastHook(t, h)
	require.Equal(t, "resume", hook.Source)
	check("resume", hook, h.API.LastMain(t))

	// /compact, in print mode; then a turn, which shows what the
	// compaction left the model.
	h.Print(t, "/compact", "--resume", a)
	require.NotEmpty(t, h.API.Of(modelapi.KindCompact), "/compact made no summary request")
	var compact claudecode.HookRun
	for _, r := range h.Hooks() {
		if r.Source == "compact" {
			compact = r
		}
	}
	require.Equal(t, "compact", compact.Source, "no SessionStart hook ran with source compact")
	h.Print(t, "Go on.", "--resume", a)
	check("after /compact", compact, h.API.LastMain(t))
}

// TestLargeTaskList ensures a TaskList of 40 tasks with 2,000-character
// descriptions (80,000 characters of descriptions) reaches the model as
// the tool's own result, within 40,000 characters, not as Claude Code's
// preview and file path, with the counts at its start.
func TestLargeTaskList(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := claudecode.New(t, claudecode.Options{Respond: p.Respond})
	a := uuid.NewString()
	createTasks(t, h, a, 40, 2000)
	p.Set(modelapi.NewScript(loadTools, modelapi.Call(taskList, nil), modelapi.Text("Listed.")))
	h.Print(t, "List.", "--session-id", a)
	main := h.API.Main()
	require.Len(t, main, 3, h.API.Dump())
	res := main[2].PendingToolResults()
	require.Len(t, res, 1)
	assertWhole(t, "the TaskList result", res[0].Text)
	text := claudecode.StripReminders(res[0].Text)
	t.Logf("the TaskList result that reached the model: %d characters, starting %.300q", jsLen(text), text)
	assert.LessOrEqual(t, jsLen(text), maxResultChars)
	assert.True(t, strings.HasPrefix(text, "Tasks: 40 pending."), "the counts first: %.80q", text)
	v := toolJSON(t, res[0])
	assert.Len(t, v["tasks"], 40, "every task is listed (descriptions may be shortened)")
}
