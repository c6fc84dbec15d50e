package compact_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/compact"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestBuild(t *testing.T) {
	// Ensures the successor holds the whole snapshot with its next id, the
	// snapshot message comes first, and the forced TaskList is logged as
	// the successor's first, forced call.
	st := store.New()
	st.Create("a", "")
	st.Create("b", "")
	done := tasksessiond.Completed
	st.Update(tasksessiond.Change{Taskid: 1, Status: done})
	old := tasksessiond.Session{ID: "old", Title: "T", Metadata: json.RawMessage(`{"k":1}`)}

	p, err := compact.Build(old, st, "new", "the summary")
	require.NoError(t, err)
	assert.Equal(t, "old", p.Old)
	assert.Equal(t, "new", p.New.ID)
	assert.Equal(t, "old", p.New.ParentID)
	assert.Equal(t, "T", p.New.Title)
	assert.Equal(t, st.Snapshot(), *p.New.Snapshot)
	assert.Equal(t, 3, p.New.Snapshot.NextTaskid)
	assert.Equal(t, st.List(), p.Tasks)
	require.Len(t, p.Messages, 2)
	assert.Equal(t, compact.KindTaskSnapshot, p.Messages[0].Kind)
	assert.Equal(t, compact.Text(st), p.Messages[0].Content)
	assert.Equal(t, compact.KindSummary, p.Messages[1].Kind)

	c := p.Forced.Call
	assert.Equal(t, tasksessiond.Call{SessionID: "new", Seq: 1, CallID: "tasksessiond-compact-new", Name: tools.TaskList,
		Arguments: json.RawMessage("{}"), Result: c.Result, Forced: true}, c)
	var res struct {
		StructuredContent wire.Listing `json:"structuredContent"`
	}
	require.NoError(t, json.Unmarshal(c.Result, &res))
	assert.ElementsMatch(t, st.List(), res.StructuredContent.Tasks)

	noSummary, err := compact.Build(old, st, "new", "")
	require.NoError(t, err)
	assert.Len(t, noSummary.Messages, 1)
}

func TestTextIsDeterministic(t *testing.T) {
	st := store.New()
	st.Create("a", "line1\nline2")
	assert.Equal(t, "Task list carried over from before the context was compacted: the same tasks with the same taskids. "+
		"Keep updating them with TaskUpdate; the next TaskCreate gets #2.\n\n"+
		"Tasks: 1 pending.\n\n#1 [pending] a\n\tline1\n\tline2", compact.Text(st))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestForcedTaskListIsEncodedLikeEveryResult(t *testing.T) {
	// Ensures the forced TaskList's result is encoded as every other
	// result is (tools.Encode): "<", ">" and "&" as themselves, not as
	// six-byte escapes the model pays for.
	st := store.New()
	st.Create("fix <a> & <b>", "x > y")
	p, err := compact.Build(tasksessiond.Session{ID: "old"}, st, "new", "")
	require.NoError(t, err)
	want, _, err := tools.Encode(tools.ListResult(st))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(p.Forced.Call.Result))
	assert.Contains(t, string(p.Forced.Call.Result), "fix <a> & <b>")
}

func TestFitText(t *testing.T) {
	// Ensures a snapshot's text (the list as it was at a compaction) is
	// read back and fitted to a budget with the hooks' ladder: whole when
	// it fits; else within the budget, the head kept, every open task
	// named; and that tools.ParseList reads back what WriteList wrote.
	st := store.New()
	for i := 1; i <= 300; i++ {
		desc := strings.Repeat("d", 500)
		if i%7 == 0 {
			desc = "line one\n\n  indented line\n#not a task"
		}
		st.Create(fmt.Sprintf("Task %03d [x] #%d", i, i), desc)
	}
	done := tasksessiond.Completed
	for i := 1; i <= 100; i++ {
		_, err := st.Update(tasksessiond.Change{Taskid: i, Status: done})
		require.NoError(t, err)
	}
	text := compact.Text(st)
	_, list, _ := strings.Cut(text, "\n\n")
	back, ok := tools.ParseList(list)
	require.True(t, ok)
	assert.Equal(t, st.List(), back, "read back as written")

	assert.Equal(t, text, compact.FitText(text, len(text)), "whole when it fits")
	fitted := compact.FitText(text, tools.MaxHookChars)
	assert.LessOrEqual(t, tools.Length(fitted), tools.MaxHookChars)
	assert.True(t, strings.HasPrefix(fitted, "Task list carried over"), fitted)
	assert.Contains(t, fitted, "the next TaskCreate gets #301.")
	for i := 101; i <= 300; i++ {
		assert.Contains(t, fitted, fmt.Sprintf("\n#%d [pending] Task %03d [x] #%d", i, i, i))
	}
	assert.Contains(t, fitted, "\n#1–#100 completed\n#101 [pending]", "closed tasks folded in place")
	assert.Equal(t, compact.TextWithin(st.List(), 301, tools.MaxHookChars), fitted)

	assert.Contains(t, compact.FitText("Head #3.\n\nnot a list "+strings.Repeat("x", 100), 50), "call TaskList")
}
