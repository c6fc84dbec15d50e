package claudecode_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestAutoCompactMidTurn ensures that when Claude Code compacts on its
// own in the middle of a turn (between two tool calls: the model's reply
// says the context is nearly full), the compaction hook runs, the list is
// in the next request, and the ids continue.
func TestAutoCompactMidTurn(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := claudecode.New(t, claudecode.Options{Respond: p.Respond})
	a := uuid.NewString()
	full := modelapi.Call(taskCreate, map[string]any{"subject": "Two"})
	full.Usage = &modelapi.Usage{InputTokens: 170_000, OutputTokens: 50}
	script := p.Set(modelapi.NewScript(
		loadTools,
		modelapi.Call(taskCreate, map[string]any{"subject": "One"}),
		full,
		modelapi.Call(taskCreate, map[string]any{"subject": "Three"}),
		modelapi.Text("All three."),
	))
	h.Print(t, "Plan three.", "--session-id", a)
	require.True(t, script.Done(), h.API.Dump())

	if b, err := os.ReadFile(h.Debug); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "autocompact") && !strings.Contains(line, "level=ok") {
				t.Logf("claude: %s", line)
			}
		}
	}
	compacts := h.API.Of(modelapi.KindCompact)
	require.NotEmpty(t, compacts, "Claude Code did not auto-compact")
	var hook claudecode.HookRun
	for _, r := range h.Hooks() {
		if r.Source == "compact" {
			hook = r
		}
	}
	require.Equal(t, "compact", hook.Source, "no SessionStart hook ran with source compact")
	var next *modelapi.Request
	for _, r := range h.API.Main() {
		if r.Seq > compacts[0].Seq {
			next = r
			break
		}
	}
	require.NotNil(t, next, "no request after the compaction")
	ctx := hookContexts(next)
	require.NotEmpty(t, ctx, "the compaction hook's list is not in the request after it")
	assert.Contains(t, ctx[len(ctx)-1], "#2 [pending] Two")
	assert.Contains(t, ctx[len(ctx)-1], hook.Context)
	if res := next.PendingToolResults(); len(res) == 1 && len(hookContexts(&modelapi.Request{Messages: []modelapi.Message{{Blocks: res}}})) > 0 {
		t.Logf("after the mid-turn compaction, Claude Code appended the hook's context to the pending %s result", res[0].Name)
	}
	last := h.API.LastMain(t)
	created := toolJSON(t, last.PendingToolResults()[0])
	assert.Contains(t, created["message"], "#3")
	assert.Equal(t, []string{"1 pending One", "2 pending Two", "3 pending Three"}, h.Daemon.Subjects(t, a))
}
