package gemini_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/gemini"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// result returns the text of the one result of the named tool that r
// answers, failing unless there is exactly one and it is no error.
func result(t *testing.T, r *modelapi.Request, name string) string {
	t.Helper()
	bs := pending(r)[name]
	require.Len(t, bs, 1, "results of %s in request %d", name, r.Seq)
	require.False(t, bs[0].IsError, bs[0].Text)
	return bs[0].Text
}

// A new session gets its own empty list; --resume gets the session's list
// back (the SessionStart hook's context before the prompt) and its ids go
// on; the other session's list is untouched.
func TestNewSessionAndResume(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := gemini.New(t, gemini.Options{Respond: p.Respond})

	p.Set(modelapi.NewScript(
		modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Alpha one"}), call(gemini.TaskCreate, map[string]any{"subject": "Alpha two"})),
		modelapi.Text("ok"),
	))
	a := h.Run(t, "Plan A.")

	n := len(h.API.Main())
	p.Set(modelapi.NewScript(
		modelapi.Calls(call(gemini.TaskList, nil)),
		modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Beta one"})),
		modelapi.Text("ok"),
	))
	b := h.Run(t, "Plan B.")
	require.NotEqual(t, a.SessionID, b.SessionID)
	m := h.API.Main()[n:]
	require.Len(t, m, 3)
	assert.NotContains(t, m[0].ConversationText(), "Alpha", "a new session is told nothing of another's list")
	assert.Contains(t, result(t, m[1], gemini.TaskList), "The task list is empty")
	assert.Contains(t, result(t, m[2], gemini.TaskCreate), "#1 pending:")

	n = len(h.API.Main())
	p.Set(modelapi.NewScript(
		modelapi.Calls(call(gemini.TaskList, nil)),
		modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Alpha three"})),
		modelapi.Text("ok"),
	))
	r := h.Run(t, "Go on with A.", "--resume", a.SessionID)
	require.Equal(t, a.SessionID, r.SessionID)
	m = h.API.Main()[n:]
	require.Len(t, m, 3)
	prompt := m[0].LastUserText()
	assert.Contains(t, prompt, "<hook_context>", "the resume hook's context reaches the model")
	assert.Contains(t, prompt, "#1 [pending] Alpha one")
	assert.Contains(t, prompt, "#2 [pending] Alpha two")
	assert.NotContains(t, prompt, "Beta")
	assert.Contains(t, prompt, "mcp_tasks_TaskUpdate", "the tools by the names Gemini's model knows")
	assert.Equal(t, 1, strings.Count(m[0].ConversationText(), "(tasksessiond session "+a.SessionID+", list "), "the list is in the resumed request once")
	list := result(t, m[1], gemini.TaskList)
	assert.Contains(t, list, "Alpha one")
	assert.Contains(t, result(t, m[2], gemini.TaskCreate), "#3 pending:")

	// Resumed again, with no change: Gemini CLI does not keep a hook's
	// context in the session (the resumed history has the prompt as typed),
	// so each resume gets the list again, once.
	n = len(h.API.Main())
	p.Set(modelapi.NewScript(modelapi.Text("ok")))
	h.Run(t, "Anything left?", "--resume", a.SessionID)
	m = h.API.Main()[n:]
	require.Len(t, m, 1)
	assert.Contains(t, m[0].LastUserText(), "#3 [pending] Alpha three")
	assert.Equal(t, 1, strings.Count(m[0].ConversationText(), "(tasksessiond session "+a.SessionID+", list "), "the list once")
	assert.NotContains(t, m[0].ConversationText(), "<hook_context>Your task list for this conversation, kept by tasksessiond. Keep it current with mcp_tasks_TaskUpdate; the next mcp_tasks_TaskCreate gets #3.")

	starts := h.Hooks("SessionStart")
	require.Len(t, starts, 4)
	for i, want := range []string{"startup", "startup", "resume", "resume"} {
		assert.Equal(t, want, starts[i].Source)
	}
	assert.Equal(t, a.SessionID, starts[2].SessionID)
	assert.Equal(t, []string{"#1 pending Alpha one", "#2 pending Alpha two", "#3 pending Alpha three"}, tasks(h.Daemon.Resume(t, a.SessionID).Tasks))
	assert.Equal(t, []string{"#1 pending Beta one"}, tasks(h.Daemon.Resume(t, b.SessionID).Tasks))
}

// Two sessions at once (two gemini processes, each with its bridge, one
// daemon): each list is its own session's, ids from #1 in both.
func TestTwoSessionsAtOnce(t *testing.T) {
	t.Parallel()
	h := gemini.New(t, gemini.Options{Respond: modelapi.Steps(
		&modelapi.Step{Match: func(r *modelapi.Request) bool { return r.Kind == modelapi.KindMain && len(r.PendingToolResults()) > 0 },
			Reply: func(*modelapi.Request) modelapi.Reply { return modelapi.Text("ok") }},
		&modelapi.Step{Match: modelapi.IsKind(modelapi.KindMain), Reply: func(r *modelapi.Request) modelapi.Reply {
			who := "Alpha"
			if strings.Contains(r.LastUserText(), "Plan B.") {
				who = "Beta"
			}
			return modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": who + " one"}), call(gemini.TaskCreate, map[string]any{"subject": who + " two"}))
		}},
	)})
	ids := map[string]string{}
	var mu sync.Mutex
	t.Run("both", func(t *testing.T) {
		for _, who := range []string{"A", "B"} {
			t.Run(who, func(t *testing.T) {
				t.Parallel()
				id := h.Run(t, "Plan "+who+".").SessionID
				mu.Lock()
				ids[who] = id
				mu.Unlock()
			})
		}
	})
	require.Len(t, ids, 2)
	require.NotEqual(t, ids["A"], ids["B"])
	assert.Equal(t, []string{"#1 pending Alpha one", "#2 pending Alpha two"}, tasks(h.Daemon.Resume(t, ids["A"]).Tasks))
	assert.Equal(t, []string{"#1 pending Beta one", "#2 pending Beta two"}, tasks(h.Daemon.Resume(t, ids["B"]).Tasks))
	servers := h.MCPServers()
	require.Len(t, servers, 2)
	assert.NotEqual(t, servers[0].PPID, servers[1].PPID, "each process its own bridge")
}
