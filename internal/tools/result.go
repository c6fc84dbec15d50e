package tools

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/wire"
)

// Result is an MCP CallToolResult as the daemon builds it, before it is
// encoded once (Encode): StructuredContent holds the tool's own result
// value (wire.Written, Got or Listing), conforming to its outputSchema;
// error results have none. wire.CallToolResult is the same result as a
// client decodes it, its structured part still bytes: not a twin, the
// other side of the encoding.
type Result struct {
	Content           []wire.Content `json:"content"`
	StructuredContent any            `json:"structuredContent,omitempty"`
	IsError           bool           `json:"isError"`
}

// Text returns the text shown to the model.
func (r Result) Text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// ErrorResult is a tool failure the model should read and correct.
func ErrorResult(msg string) Result {
	return Result{Content: []wire.Content{{Type: "text", Text: "Error: " + msg}}, IsError: true}
}

// Apply makes a write's change to st without rendering a result: replay's
// path. It returns the task as it now is, or the store's error.
func Apply(st *store.Store, c Call) (tasksessiond.Task, error) {
	switch c.Name {
	case TaskCreate:
		return st.Create(*c.Subject, *c.Description), nil
	case TaskUpdate:
		return st.Update(c.Change)
	}
	return tasksessiond.Task{}, fmt.Errorf("%s is not a write", c.Name)
}

// Execute runs a decoded call against st. Writes change st; changed is the
// task as it is after a successful write, nil otherwise. A call that fails
// (an unknown taskid) changes nothing and yields an error result.
func Execute(st *store.Store, c Call) (res Result, changed *tasksessiond.Task) {
	switch c.Name {
	case TaskCreate:
		t, _ := Apply(st, c)
		return taskResult(st, t), &t
	case TaskUpdate:
		if _, err := st.Get(c.Taskid); err != nil {
			return notFound(st, c.Taskid), nil
		}
		t, err := Apply(st, c)
		if err != nil {
			return ErrorResult(err.Error()), nil
		}
		return taskResult(st, t), &t
	case TaskGet:
		t, err := st.Get(c.Taskid)
		if err != nil {
			return notFound(st, c.Taskid), nil
		}
		// A description is at most MaxDescriptionRunes, which fits; one
		// logged under an older, higher limit is cut to fit.
		if Length(t.Description) > MaxResultChars/2 {
			t.Description = shorten(t.Description, MaxResultChars/4)
		}
		var b strings.Builder
		writeTask(&b, t)
		return Result{
			Content:           []wire.Content{{Type: "text", Text: b.String()}},
			StructuredContent: wire.Got{Task: t, Counts: st.Counts()},
		}, nil
	case TaskList:
		return ListResult(st), nil
	}
	return ErrorResult(fmt.Sprintf("unknown tool %q", c.Name)), nil
}

// ListResult is TaskList's result: the counts, then every task in taskid
// order, within MaxResultChars in its text and in its structured JSON alike.
func ListResult(st *store.Store) Result {
	return listResult(st.List(), MaxResultChars, Length, true)
}

// ListResultWithin is ListResult for tasks (in taskid order) with its text
// within max as measure counts it: for a host that shows the model the
// text only, with a smaller budget (Codex CLI cuts a tool's output past
// 10,000 bytes for a model outside its catalog).
func ListResultWithin(tasks []tasksessiond.Task, max int, measure func(string) int) Result {
	return listResult(tasks, max, measure, false)
}

func listResult(tasks []tasksessiond.Task, max int, measure func(string) int, structuredToo bool) Result {
	extra := func(view) int { return 0 }
	if structuredToo {
		extra = func(v view) int { return listingLength(v, measure) }
	}
	v := fitList(tasks, max, PlainNames, measure, extra)
	return Result{Content: []wire.Content{{Type: "text", Text: v.text}}, StructuredContent: v.listing()}
}

func (v view) listing() wire.Listing {
	l := wire.Listing{Counts: v.counts, Tasks: v.tasks, Folded: v.folded, MoreOpen: v.moreOpen}
	if l.Tasks == nil {
		l.Tasks = []tasksessiond.Task{}
	}
	if v.shortened {
		l.Note = "Shortened to fit: TaskGet shows any task whole."
	}
	return l
}

// listingLength is the length of v's structured result as JSON text.
func listingLength(v view, measure func(string) int) int {
	b, err := jsonrpc.Encode(nil, v.listing())
	if err != nil {
		return math.MaxInt
	}
	return measure(string(b))
}

// RenderList is the full text rendering of a store: the counts, then every
// task with its description. Compaction injects this same text.
func RenderList(st *store.Store) string {
	var b strings.Builder
	b.Grow(ListSize(st))
	WriteList(&b, st)
	return b.String()
}

// WriteList writes RenderList's text to b.
func WriteList(b *strings.Builder, st *store.Store) {
	if st.Len() == 0 {
		b.WriteString(emptyList)
		return
	}
	b.WriteString(listHead)
	b.WriteString(countsText(st.Counts(), nil))
	b.WriteString(".\n")
	for t := range st.All() {
		b.WriteString("\n")
		writeTask(b, t)
	}
}

const (
	emptyList = "The task list is empty. Use TaskCreate to plan the work."
	listHead  = "Tasks: "
)

// ParseList reads back the tasks of a text WriteList wrote (in the order
// written), and whether text is such a text: a subject is one line, and
// each line of a description is indented, so the text says where each
// task and each description begins and ends.
func ParseList(text string) ([]tasksessiond.Task, bool) {
	if text == emptyList {
		return []tasksessiond.Task{}, true
	}
	head, body, ok := strings.Cut(text, "\n")
	if !ok || !strings.HasPrefix(head, listHead) {
		return nil, false
	}
	if body == "" {
		return []tasksessiond.Task{}, true
	}
	body, ok = strings.CutPrefix(body, "\n")
	if !ok {
		return nil, false
	}
	var tasks []tasksessiond.Task
	var desc []string
	end := func() {
		if len(tasks) > 0 && desc != nil {
			tasks[len(tasks)-1].Description = strings.Join(desc, "\n")
		}
		desc = nil
	}
	for line := range strings.SplitSeq(body, "\n") {
		// A tab begins a description's line; four spaces did in texts of
		// earlier versions, which a stored message may hold.
		d, ok := strings.CutPrefix(line, "\t")
		if !ok {
			d, ok = strings.CutPrefix(line, "    ")
		}
		if ok && len(tasks) > 0 {
			desc = append(desc, d)
			continue
		}
		// "#id [status] subject"
		rest, ok := strings.CutPrefix(line, "#")
		if !ok {
			return nil, false
		}
		id, rest, ok := strings.Cut(rest, " [")
		if !ok {
			return nil, false
		}
		status, subject, ok := strings.Cut(rest, "] ")
		n, err := strconv.Atoi(id)
		st, serr := tasksessiond.ParseStatus(status)
		if !ok || err != nil || serr != nil || n < 1 {
			return nil, false
		}
		end()
		tasks = append(tasks, tasksessiond.Task{Taskid: n, Status: st, Subject: subject})
	}
	end()
	return tasks, true
}

// ListSize is about the length of RenderList's text, to size a buffer once
// (a long list would otherwise be copied a dozen times as it grows).
func ListSize(st *store.Store) int {
	n := len(emptyList) + 100
	for t := range st.All() {
		n += len(t.Subject) + len(t.Description) + len(t.Status) + 32 + strings.Count(t.Description, "\n")
	}
	return n
}

func taskResult(st *store.Store, t tasksessiond.Task) Result {
	w := wire.Written{Task: wire.Brief{Taskid: t.Taskid, Status: t.Status, Subject: t.Subject}, Overview: overview(st)}
	return Result{Content: []wire.Content{{Type: "text", Text: writtenText(w)}}, StructuredContent: w}
}

func notFound(st *store.Store, id int) Result {
	msg := fmt.Sprintf("no task has taskid %d", id)
	if st.Len() == 0 {
		msg += "; the task list is empty (create tasks with TaskCreate)"
	} else {
		var first int
		for t := range st.All() {
			first = t.Taskid
			break
		}
		msg += fmt.Sprintf("; taskids run from %d to %d (call TaskList to see them)", first, st.NextTaskid()-1)
	}
	return ErrorResult(msg)
}

// maxOverviewInProgress bounds the tasks in progress a write's result
// names: every result stays in the conversation, and TaskList is where the
// whole list lives.
const maxOverviewInProgress = 10

// overview is the list after a change: the counts and the ids of the tasks
// in progress, in taskid order.
func overview(st *store.Store) wire.Overview {
	c := st.Counts()
	ov := wire.Overview{Counts: c}
	if c.InProgress == 0 {
		return ov
	}
	for t := range st.Open() {
		if t.Status == tasksessiond.InProgress {
			ov.InProgress = append(ov.InProgress, t.Taskid)
			if len(ov.InProgress) == min(c.InProgress, maxOverviewInProgress) {
				break
			}
		}
	}
	return ov
}

// writtenText is what the model reads of a write: the task as written, in
// the words "task #3 is now inprogress: Subject", then the counts of the
// list after it, with the tasks in progress ("#3 inprogress: Subject\n16
// pending, inprogress #3, 3 completed"). A status update at 20 tasks reads
// under 100 bytes; the model has just written the rest.
func writtenText(w wire.Written) string {
	var b strings.Builder
	b.WriteByte('#')
	b.WriteString(strconv.Itoa(w.Task.Taskid))
	b.WriteByte(' ')
	b.WriteString(string(w.Task.Status))
	b.WriteString(": ")
	b.WriteString(w.Task.Subject)
	b.WriteString("\n")
	b.WriteString(countsText(w.Counts, w.InProgress))
	return b.String()
}

// countsText says the counts that are not zero ("16 pending, 1 inprogress,
// 3 completed"); "no tasks" for none. With the ids in progress given, and
// all of them, they stand for their count ("inprogress #3, #5"); else
// they follow it ("12 inprogress (#1, #2, …)").
func countsText(c tasksessiond.Counts, inProgress []int) string {
	var b strings.Builder
	for _, n := range []struct {
		n  int
		st tasksessiond.Status
	}{{c.Pending, tasksessiond.Pending}, {c.InProgress, tasksessiond.InProgress}, {c.Completed, tasksessiond.Completed}, {c.Deleted, tasksessiond.Deleted}} {
		if n.n == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		ids := n.st == tasksessiond.InProgress && len(inProgress) > 0
		if ids && len(inProgress) == n.n {
			b.WriteString(string(n.st))
			b.WriteByte(' ')
			writeIDs(&b, inProgress)
			continue
		}
		b.WriteString(strconv.Itoa(n.n))
		b.WriteByte(' ')
		b.WriteString(string(n.st))
		if ids {
			b.WriteString(" (")
			writeIDs(&b, inProgress)
			b.WriteString(", …)")
		}
	}
	if b.Len() == 0 {
		return "no tasks"
	}
	return b.String()
}

// writeIDs writes "#1, #2".
func writeIDs(b *strings.Builder, ids []int) {
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('#')
		b.WriteString(strconv.Itoa(id))
	}
}

// writeTask writes "#id [status] subject" and the description's lines,
// each after a tab; without fmt, as a list of 10,000 tasks is rendered at once.
func writeTask(b *strings.Builder, t tasksessiond.Task) {
	b.WriteByte('#')
	b.WriteString(strconv.Itoa(t.Taskid))
	b.WriteString(" [")
	b.WriteString(string(t.Status))
	b.WriteString("] ")
	b.WriteString(t.Subject)
	if t.Description != "" {
		for line := range strings.SplitSeq(t.Description, "\n") {
			b.WriteString("\n\t")
			b.WriteString(line)
		}
	}
}

// Echo is t as earlier versions echoed it in a write's result, a long
// description shortened: the log's change columns, filled once from those
// results, hold it so (replay compares them).
func Echo(t tasksessiond.Task) tasksessiond.Task {
	if utf8.RuneCountInString(t.Description) > maxEchoDescription {
		t.Description = shorten(t.Description, maxEchoDescription)
	}
	return t
}

// maxEchoDescription bounds the description earlier versions echoed.
const maxEchoDescription = 300
