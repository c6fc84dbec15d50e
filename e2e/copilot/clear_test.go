package copilot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/copilot"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// /clear in the interactive CLI (tmux) starts a new session in the same
// process: Copilot CLI 1.0.102 fires no sessionStart for it, but starts
// its MCP servers again, with the new session's id; the next calls go to
// the new session's list (their _meta, the preMcpToolCall hook's, names
// it too), which starts empty; the first list stays whole.
func TestClear(t *testing.T) {
	t.Parallel()
	h := copilot.New(t, copilot.Options{Respond: modelapi.Steps(
		&modelapi.Step{Match: modelapi.LastUserContains("Plan A."), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Alpha one"})
		}},
		&modelapi.Step{Match: modelapi.LastUserContains("Plan B."), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Beta one"})
		}},
		&modelapi.Step{Match: modelapi.IsKind(modelapi.KindMain), Reply: func(*modelapi.Request) modelapi.Reply { return modelapi.Text("Noted.") }},
	)})
	h.ExtraEnv = append(h.ExtraEnv, "COPILOT_ALLOW_ALL=true")
	term := h.StartTerm(t, 90*time.Second, func(s string) bool { return strings.Contains(s, "/ commands") },
		"--allow-all-tools", "--no-auto-update")
	submit(t, term, "Plan A.", func() bool { return len(h.API.Main()) > 0 })
	term.WaitForText(60*time.Second, "Noted.")
	starts := h.Hooks("source")
	require.NotEmpty(t, starts)
	a := starts[0].SessionID
	require.Equal(t, []string{"#1 pending Alpha one"}, tasks(h.Daemon.Resume(t, a).Tasks))

	submit(t, term, "/clear", func() bool { return len(h.Rec.MCPStarts()) >= 2 })
	servers := h.Rec.MCPStarts()
	c := servers[len(servers)-1].Getenv("COPILOT_AGENT_SESSION_ID")
	require.NotEqual(t, a, c, "/clear makes a new session id")
	n := len(h.API.Main())
	submit(t, term, "Plan B.", func() bool { return len(h.API.Main()) > n })
	cl := h.Daemon.Client(t)
	harness.WaitFor(t, 60*time.Second, "Beta one in the new session's list", func() bool {
		s, err := cl.Head(t.Context(), c)
		return err == nil && s.Counts.Total > 0
	})
	var named bool
	for _, r := range h.Hooks("serverName") {
		named = named || strings.Contains(r.Output, `"copilot/sessionId":"`+c+`"`)
	}
	assert.True(t, named, "the new session's call named it in its _meta")
	assert.Equal(t, []string{"#1 pending Alpha one"}, tasks(h.Daemon.Resume(t, a).Tasks), "the first list stays whole")
	assert.Equal(t, []string{"#1 pending Beta one"}, tasks(h.Daemon.Resume(t, c).Tasks), "the new session's list is its own")
	// Let Copilot CLI write its session out and quit before the test's
	// directories go.
	submit(t, term, "/exit", term.Dead)
}

// submit types line into the CLI's prompt and presses Enter until done
// holds (harness.Term.SubmitUntil).
func submit(t *testing.T, term *harness.Term, line string, done func() bool) {
	t.Helper()
	term.SubmitUntil(line, line, done)
}
