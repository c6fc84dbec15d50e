package copilot_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/copilot"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// A subagent (the task tool) works on its parent session's list: its
// TaskCreate and the parent's next one share the ids (the preMcpToolCall
// hook names no session for a subagent's call, whose hook input names the
// subagent's own); the database lost, the list is rebuilt from the
// session's events.jsonl with the subagent's call.
func TestSubagent(t *testing.T) {
	t.Parallel()
	isSub := func(r *modelapi.Request) bool {
		return r.Kind == modelapi.KindMain && strings.Contains(r.FirstUserText(), "SUBAGENT:")
	}
	h := copilot.New(t, copilot.Options{Respond: modelapi.Steps(
		&modelapi.Step{Match: func(r *modelapi.Request) bool { return isSub(r) && len(r.PendingToolResults()) == 0 }, Once: true,
			Reply: func(*modelapi.Request) modelapi.Reply {
				return modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "From the subagent"})
			}},
		&modelapi.Step{Match: isSub, Reply: func(*modelapi.Request) modelapi.Reply { return modelapi.Text("Sub done.") }},
		&modelapi.Step{Match: modelapi.LastUserContains("Plan with a helper."), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return modelapi.Call("task", map[string]any{"description": "Make a task", "prompt": "SUBAGENT: make one task.",
				"agent_type": "general-purpose", "name": "helper"})
		}},
		&modelapi.Step{Match: modelapi.AnswersTool("task"), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "From the parent"})
		}},
		&modelapi.Step{Match: modelapi.IsKind(modelapi.KindMain), Reply: func(*modelapi.Request) modelapi.Reply { return modelapi.Text("ok") }},
	)})
	a := h.Run(t, "Plan with a helper.").SessionID
	var sub bool
	for _, r := range h.API.Main() {
		sub = sub || strings.Contains(r.FirstUserText(), "SUBAGENT:")
	}
	require.True(t, sub, "the subagent ran:\n%s", h.API.Dump())
	assert.Equal(t, []string{"#1 pending From the subagent", "#2 pending From the parent"}, tasks(h.Daemon.Resume(t, a).Tasks))

	h.Daemon.LoseDatabase(t)
	h.Run(t, "Where are we?", "--resume", a)
	assert.Equal(t, []string{"#1 pending From the subagent", "#2 pending From the parent"}, tasks(h.Daemon.Resume(t, a).Tasks),
		"rebuilt from events.jsonl, the subagent's call included")
}
