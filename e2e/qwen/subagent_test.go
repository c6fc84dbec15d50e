package qwen_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/qwen"
)

// A subagent (the agent tool) works on its parent session's list: its
// TaskCreate (through tool_call) and the parent's share the ids (Qwen Code
// may run the agent in the background, so either may come first); the
// database lost, the list is rebuilt with the subagent's call, from its
// own record (subagents/<id>/agent-*.jsonl), in the order made.
func TestSubagent(t *testing.T) {
	t.Parallel()
	isSub := func(r *modelapi.Request) bool {
		return r.Kind == modelapi.KindMain && strings.Contains(r.ConversationText(), "SUBAGENT:") && !strings.Contains(r.ConversationText(), "Plan with a helper.")
	}
	steps := modelapi.Steps(
		&modelapi.Step{Match: func(r *modelapi.Request) bool { return isSub(r) && len(r.PendingToolResults()) == 0 }, Once: true,
			Reply: func(*modelapi.Request) modelapi.Reply {
				return viaBridge(qwen.TaskCreate, map[string]any{"subject": "From the subagent"})
			}},
		&modelapi.Step{Match: isSub, Reply: func(*modelapi.Request) modelapi.Reply { return modelapi.Text("Sub done.") }},
		&modelapi.Step{Match: modelapi.LastUserContains("Plan with a helper."), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return modelapi.Call("agent", map[string]any{"description": "Make a task", "prompt": "SUBAGENT: make one task.", "subagent_type": "general-purpose"})
		}},
		&modelapi.Step{Match: modelapi.AnswersTool("agent"), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return viaBridge(qwen.TaskCreate, map[string]any{"subject": "From the parent"})
		}},
		&modelapi.Step{Match: modelapi.IsKind(modelapi.KindMain), Reply: func(*modelapi.Request) modelapi.Reply { return modelapi.Text("ok") }},
	)
	h := qwen.New(t, qwen.Options{Respond: steps})
	a := h.Run(t, "Plan with a helper.").SessionID
	var sub bool
	for _, r := range h.API.Main() {
		sub = sub || isSub(r)
	}
	require.True(t, sub, "the subagent ran:\n%s", h.API.Dump())
	before := tasks(h.Daemon.Resume(t, a).Tasks)
	subjects := []string{before[0][3:], before[1][3:]}
	sort.Strings(subjects)
	require.Equal(t, []string{"pending From the parent", "pending From the subagent"}, subjects)

	h.Daemon.LoseDatabase(t)
	h.Run(t, "Where are we?", "--resume", a)
	assert.Equal(t, before, tasks(h.Daemon.Resume(t, a).Tasks), "rebuilt from the records, the subagent's call included, the same ids")
}
