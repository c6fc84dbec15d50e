package qwen_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/qwen"
)

// /clear (interactive, tmux) starts a new session under the same Qwen Code
// process and the same MCP server, whose environment still names the old
// one: the SessionStart hook (source clear) rebinds the bridge, whose next
// calls go to the new session's empty list; the old list stays whole.
func TestClear(t *testing.T) {
	t.Parallel()
	h := qwen.New(t, qwen.Options{Respond: modelapi.Steps(
		&modelapi.Step{Match: modelapi.LastUserContains("Plan A."), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return viaBridge(qwen.TaskCreate, map[string]any{"subject": "Alpha one"})
		}},
		&modelapi.Step{Match: modelapi.LastUserContains("Plan B."), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return viaBridge(qwen.TaskCreate, map[string]any{"subject": "Beta one"})
		}},
		&modelapi.Step{Match: modelapi.IsKind(modelapi.KindMain), Reply: func(*modelapi.Request) modelapi.Reply { return modelapi.Text("Noted.") }},
	)})
	term := h.StartTerm(t, 90*time.Second, func(s string) bool { return strings.Contains(s, "Type your message") },
		"--auth-type", "openai", "--approval-mode", "yolo")
	submit(t, term, "Plan A.", func() bool { return len(h.API.Main()) > 0 })
	term.WaitForText(60*time.Second, "Noted.")
	starts := h.Hooks("SessionStart")
	require.Len(t, starts, 1)
	a := starts[0].SessionID
	require.Equal(t, []string{"#1 pending Alpha one"}, tasks(h.Daemon.Resume(t, a).Tasks))

	submit(t, term, "/clear", func() bool { return len(h.Hooks("SessionStart")) >= 2 })
	starts = h.Hooks("SessionStart")
	assert.Equal(t, "clear", starts[1].Source)
	c := starts[1].SessionID
	require.NotEqual(t, a, c, "/clear makes a new session id")
	n := len(h.API.Main())
	submit(t, term, "Plan B.", func() bool { return len(h.API.Main()) > n })
	cl := h.Daemon.Client(t)
	harness.WaitFor(t, 60*time.Second, "Beta one in the new session's list", func() bool {
		s, err := cl.Head(t.Context(), c)
		return err == nil && s.Counts.Total > 0
	})
	assert.Len(t, h.Rec.MCPStarts(), 1, "the same MCP server lives through /clear")
	assert.Equal(t, []string{"#1 pending Alpha one"}, tasks(h.Daemon.Resume(t, a).Tasks), "the old list stays whole")
	assert.Equal(t, []string{"#1 pending Beta one"}, tasks(h.Daemon.Resume(t, c).Tasks), "the new session's list is its own, from #1")
	// Qwen Code runs as a child of the process the terminal started: it is
	// let quit before the test's directories go.
	submit(t, term, "/quit", term.Dead)
}

// submit types line into the CLI's prompt and presses Enter until done
// holds (harness.Term.SubmitUntil).
func submit(t *testing.T, term *harness.Term, line string, done func() bool) {
	t.Helper()
	term.SubmitUntil(line, line, done)
}
