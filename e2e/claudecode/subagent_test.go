package claudecode_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// subagentPrompt is the prompt the scripted model gives the Agent tool:
// requests whose conversation starts with it are the subagent's.
const subagentPrompt = "Start task 1 and add a task Two."

// split answers the subagent's requests from sub and the others from main
// (a background subagent's requests interleave with its parent's).
type split struct {
	mu        sync.Mutex
	main, sub *modelapi.Script
}

func (s *split) set(main, sub *modelapi.Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.main, s.sub = main, sub
}

func (s *split) Respond(r *modelapi.Request) (modelapi.Reply, bool) {
	s.mu.Lock()
	main, sub := s.main, s.sub
	s.mu.Unlock()
	if sub != nil && strings.Contains(r.FirstUserText(), subagentPrompt) {
		return sub.Respond(r)
	}
	if main == nil {
		return modelapi.Reply{}, false
	}
	return main.Respond(r)
}

// TestSubagentWritesSurviveRebuilds ensures the Task calls of a subagent
// (Claude Code's Agent tool, in the foreground: its turns go to
// <session>/subagents/agent-<id>.jsonl, marked isSidechain) are replayed,
// in the order made, when a list is rebuilt from the transcript: in a
// fork ("--fork-session", the bridge's rebuild on its first call) and in
// the conversation itself after its database was lost (the resume hook's
// rebuild). The subagent set #1 in progress and created #2: both show, and
// the next TaskCreate gets #3.
func TestSubagentWritesSurviveRebuilds(t *testing.T) {
	t.Parallel()
	var s split
	h := claudecode.New(t, claudecode.Options{Respond: s.Respond})
	a := uuid.NewString()
	main := modelapi.NewScript(
		loadTools,
		modelapi.Call(taskCreate, map[string]any{"subject": "One"}),
		modelapi.Call("Agent", map[string]any{"description": "Extend the plan", "prompt": subagentPrompt, "subagent_type": "general-purpose", "run_in_background": false}),
		modelapi.Text("Done."),
	)
	sub := modelapi.NewScript(
		loadTools,
		modelapi.Call(taskUpdate, map[string]any{"taskid": 1, "status": "inprogress"}),
		modelapi.Call(taskCreate, map[string]any{"subject": "Two"}),
		modelapi.Text("Started #1, added #2."),
	)
	s.set(main, sub)
	h.Print(t, "Plan.", "--session-id", a)
	require.True(t, main.Done() && sub.Done(), h.API.Dump())
	want := []string{"1 inprogress One", "2 pending Two"}
	require.Equal(t, want, h.Daemon.Subjects(t, a), "the subagent wrote to its parent's list")

	// The fork: rebuilt by the bridge from the copied history, the
	// subagent's calls (in the source's directory) included.
	checkFork(t, h, &s, a, want)

	// The database lost: the resume hook rebuilds A from its transcript,
	// the subagent's calls included, and the model is shown that list.
	h.Daemon.LoseDatabase(t)
	n := len(h.API.Main())
	back := modelapi.NewScript(
		modelapi.Call(taskList, nil),
		modelapi.Call(taskCreate, map[string]any{"subject": "Three"}),
		modelapi.Text("Back."),
	)
	s.set(back, nil)
	h.Print(t, "Go on.", "--resume", a)
	require.True(t, back.Done(), h.API.Dump())
	got := since(h, n)
	require.Len(t, got, 3, h.API.Dump())
	ctx := hookContexts(got[0])
	require.NotEmpty(t, ctx, "the resume hook added no list")
	t.Logf("after the database was lost, the hook's context: %d characters", len(ctx[len(ctx)-1]))
	assert.Contains(t, ctx[len(ctx)-1], "#1 [inprogress] One")
	assert.Contains(t, ctx[len(ctx)-1], "#2 [pending] Two")
	assert.Equal(t, want, tasksOf(t, toolJSON(t, got[1].PendingToolResults()[0])), "TaskList after the database was lost")
	assert.Contains(t, toolJSON(t, got[2].PendingToolResults()[0])["message"], "#3")
	assert.Equal(t, append(want, "3 pending Three"), h.Daemon.Subjects(t, a))
}

// TestBackgroundSubagentWritesSurviveAFork is TestSubagentWritesSurviveRebuilds's
// fork with the subagent in the background (the Agent tool's default):
// its calls interleave with its parent's by time, and the fork's rebuild
// replays them in that order.
func TestBackgroundSubagentWritesSurviveAFork(t *testing.T) {
	t.Parallel()
	var s split
	h := claudecode.New(t, claudecode.Options{Respond: s.Respond})
	a := uuid.NewString()
	sub := modelapi.NewScript(
		loadTools,
		modelapi.Call(taskUpdate, map[string]any{"taskid": 1, "status": "inprogress"}),
		modelapi.Call(taskCreate, map[string]any{"subject": "Two"}),
		modelapi.Text("Started #1, added #2."),
	)
	main := modelapi.NewScript(
		loadTools,
		modelapi.Call(taskCreate, map[string]any{"subject": "One"}),
		modelapi.Call("Agent", map[string]any{"description": "Extend the plan", "prompt": subagentPrompt, "subagent_type": "general-purpose"}),
	)
	main.Final = modelapi.Text("Noted.") // the turn, and the one the agent's end may start
	s.set(main, sub)
	h.Print(t, "Plan.", "--session-id", a)
	h.API.Wait(t, 60*time.Second, "the background subagent's last turn", func([]*modelapi.Request) bool { return sub.Done() })
	want := []string{"1 inprogress One", "2 pending Two"}
	require.Equal(t, want, h.Daemon.Subjects(t, a), "the background subagent wrote to its parent's list")

	checkFork(t, h, &s, a, want)
}

// checkFork forks conversation a (--fork-session), which the bridge
// rebuilds from the copied history, subagents' calls included: the fork's
// TaskList shows want, its TaskCreate gets #3, and its list is want and #3.
func checkFork(t *testing.T, h *claudecode.Host, s *split, a string, want []string) {
	t.Helper()
	n := len(h.API.Main())
	fork := modelapi.NewScript(
		modelapi.Call(taskList, nil),
		modelapi.Call(taskCreate, map[string]any{"subject": "Three in the fork"}),
		modelapi.Text("Forked."),
	)
	s.set(fork, nil)
	f := h.Print(t, "Go on in a fork.", "--resume", a, "--fork-session").SessionID
	require.True(t, fork.Done(), h.API.Dump())
	got := since(h, n)
	require.Len(t, got, 3, h.API.Dump())
	t.Logf("the fork's TaskList: %s", claudecode.StripReminders(got[1].PendingToolResults()[0].Text))
	assert.Equal(t, want, tasksOf(t, toolJSON(t, got[1].PendingToolResults()[0])), "the fork's TaskList")
	created := toolJSON(t, got[2].PendingToolResults()[0])
	assert.Contains(t, created["message"], "#3", "the fork's TaskCreate")
	assert.Equal(t, append(want, "3 pending Three in the fork"), h.Daemon.Subjects(t, f))
}
