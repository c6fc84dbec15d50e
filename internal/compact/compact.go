// Package compact builds the successor of a session being compacted: the
// store carried over whole (every status, and the next taskid), the message
// injected at the start of the new session, and the TaskList fired before it
// continues. It does no I/O; the session manager commits what it builds.
package compact

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

// Message kinds.
const (
	KindTaskSnapshot = "task_snapshot"
	KindSummary      = "summary"
)

// Text is the rendering of a store that compaction injects, and that
// sessions/snapshot hands to the compact worker. It is deterministic.
func Text(st *store.Store) string {
	var b strings.Builder
	head := fmt.Sprintf(carriedOver, st.NextTaskid())
	b.Grow(len(head) + tools.ListSize(st))
	b.WriteString(head)
	tools.WriteList(&b, st)
	return b.String()
}

// TextWithin is Text for tasks (in taskid order) and the next taskid,
// with the list fitted to max characters (tools.Length) as the hooks fit
// it: whole when it fits, else closed tasks and long descriptions
// shortened first, every open task's id, status and subject kept as long
// as there is room.
func TextWithin(tasks []tasksessiond.Task, next, max int) string {
	head := fmt.Sprintf(carriedOver, next)
	return head + tools.RenderWithin(tasks, max-tools.Length(head), tools.PlainNames)
}

const carriedOver = "Task list carried over from before the context was compacted: the same tasks with the same " +
	"taskids. Keep updating them with TaskUpdate; the next TaskCreate gets #%d.\n\n"

// FitText fits a text Text made (a task_snapshot message: the list as it
// was at the compaction) to max characters, as TextWithin does; a text it
// cannot read is cut to its first paragraph.
func FitText(text string, max int) string {
	if tools.Length(text) <= max {
		return text
	}
	head, list, _ := strings.Cut(text, "\n\n")
	var next int
	_, err := fmt.Sscanf(head[strings.LastIndex(head, "#")+1:], "%d", &next)
	if tasks, ok := tools.ParseList(list); ok && err == nil && next > 0 {
		slices.SortFunc(tasks, func(a, b tasksessiond.Task) int { return a.Taskid - b.Taskid })
		return TextWithin(tasks, next, max)
	}
	return head + "\n\n(The list is too long to show here: call TaskList.)"
}

// ForcedCallID is the callId of the TaskList fired at the start of a
// successor session.
func ForcedCallID(newID string) string { return "tasksessiond-compact-" + newID }

// Build plans the compaction of old, whose store is st, into a session
// with newID: the successor holding the snapshot (its tasks, which the
// database writes as the successor's first), the
// messages injected at the start of its history (the snapshot text, then
// the summary when given) and the forced TaskList as its first call.
func Build(old tasksessiond.Session, st *store.Store, newID, summary string) (tasksessiond.Compaction, error) {
	// The successor starts as exactly this store, so st renders what it
	// will show: no copy is restored just to render it.
	snap := st.Snapshot()
	p := tasksessiond.Compaction{
		Old:      old.ID,
		New:      &tasksessiond.Session{ID: newID, Title: old.Title, Metadata: old.Metadata, ParentID: old.ID, Snapshot: &snap},
		Tasks:    snap.Tasks,
		Messages: []tasksessiond.Message{{Role: "system", Kind: KindTaskSnapshot, Content: Text(st)}}, // the whole list, as the spec injects it
	}
	if summary != "" {
		p.Messages = append(p.Messages, tasksessiond.Message{Role: "system", Kind: KindSummary, Content: summary})
	}
	result, _, err := tools.Encode(tools.ListResult(st))
	if err != nil {
		return tasksessiond.Compaction{}, fmt.Errorf("compact %s: encode TaskList: %w", old.ID, err)
	}
	p.Forced = &tasksessiond.Append{Call: tasksessiond.Call{SessionID: newID, Seq: 1, CallID: ForcedCallID(newID), Name: tools.TaskList,
		Arguments: json.RawMessage("{}"), Result: result, Forced: true}}
	return p, nil
}
