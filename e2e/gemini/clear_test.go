package gemini_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/gemini"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// /clear (interactive, tmux) starts a new session under the same process
// and the same MCP server: the SessionStart hook (source clear) rebinds
// the bridge, whose next calls go to the new session's empty list; the old
// list stays whole for its own resume.
func TestClear(t *testing.T) {
	t.Parallel()
	h := gemini.New(t, gemini.Options{Respond: modelapi.Steps(
		&modelapi.Step{Match: modelapi.LastUserContains("Plan A."), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Alpha one"}))
		}},
		&modelapi.Step{Match: modelapi.LastUserContains("Plan B."), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return modelapi.Calls(call(gemini.TaskList, nil), call(gemini.TaskCreate, map[string]any{"subject": "Beta one"}))
		}},
		&modelapi.Step{Match: modelapi.IsKind(modelapi.KindMain), Reply: func(*modelapi.Request) modelapi.Reply { return modelapi.Text("Noted.") }},
	)})
	term := h.Interactive(t)
	submit(t, term, "Plan A.", func() bool { return len(h.API.Main()) > 0 })
	h.API.Wait(t, 60*time.Second, "TaskCreate's result", func(rs []*modelapi.Request) bool {
		for _, r := range rs {
			if len(pending(r)[gemini.TaskCreate]) > 0 {
				return true
			}
		}
		return false
	})
	term.WaitForText(30*time.Second, "Noted.")
	starts := h.Hooks("SessionStart")
	require.Len(t, starts, 1)
	a := starts[0].SessionID

	submit(t, term, "/clear", func() bool { return len(h.Hooks("SessionStart")) >= 2 })
	starts = h.Hooks("SessionStart")
	assert.Equal(t, "clear", starts[1].Source)
	c := starts[1].SessionID
	require.NotEqual(t, a, c, "/clear makes a new session id")

	n := len(h.API.Main())
	submit(t, term, "Plan B.", func() bool { return len(h.API.Main()) > n })
	h.API.Wait(t, 60*time.Second, "the results of Plan B.'s calls", func(rs []*modelapi.Request) bool {
		for _, r := range rs[min(n, len(rs)):] {
			if len(pending(r)[gemini.TaskCreate]) > 0 {
				return true
			}
		}
		return false
	})
	var last *modelapi.Request
	for _, r := range h.API.Main()[n:] {
		if len(pending(r)[gemini.TaskCreate]) > 0 {
			last = r
		}
	}
	require.NotNil(t, last)
	assert.NotContains(t, last.ConversationText(), "Alpha one", "the cleared conversation is gone")
	assert.Contains(t, result(t, last, gemini.TaskList), "The task list is empty")
	assert.Contains(t, result(t, last, gemini.TaskCreate), "#1 pending:")

	assert.Len(t, h.MCPServers(), 1, "the same MCP server lives through /clear")
	assert.Equal(t, []string{"#1 pending Alpha one"}, tasks(h.Daemon.Resume(t, a).Tasks))
	assert.Equal(t, []string{"#1 pending Beta one"}, tasks(h.Daemon.Resume(t, c).Tasks))
}

// submit types line into the CLI's prompt and presses Enter until done
// holds (harness.Term.SubmitUntil).
func submit(t *testing.T, term *harness.Term, line string, done func() bool) {
	t.Helper()
	term.SubmitUntil(line, "> "+line, done)
}
