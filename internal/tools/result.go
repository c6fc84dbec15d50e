package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tasksessiond/tasksessiond"
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
		return taskResult(st, fmt.Sprintf("Created task #%d %q (pending).", t.Taskid, t.Subject), t), &t
	case TaskUpdate:
		before, err := st.Get(c.Taskid)
		if err != nil {
			return notFound(st, c.Taskid), nil
		}
		t, err := Apply(st, c)
		if err != nil {
			return ErrorResult(err.Error()), nil
		}
		return taskResult(st, "Updated task "+describeChange(before, t)+".", t), &t
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

// ListResult is TaskList's result: the counts, then every open task, then
// every closed one (each in taskid order), within MaxResultChars in its
// text and in its structured JSON alike.
func ListResult(st *store.Store) Result {
	return ListResultWithin(st.List(), MaxResultChars, Length)
}

// ListResultWithin is ListResult for tasks (in taskid order) within max as
// measure counts it, in its text and in its structured JSON alike: for a
// host with a smaller budget (Codex CLI cuts a tool's output past 10,000
// bytes for a model outside its catalog).
func ListResultWithin(tasks []tasksessiond.Task, max int, measure func(string) int) Result {
	v := fitList(tasks, max, PlainNames, measure, func(v view) int { return listingLength(v, measure) })
	return Result{Content: []wire.Content{{Type: "text", Text: v.text}}, StructuredContent: v.listing()}
}

func (v view) listing() wire.Listing {
	l := wire.Listing{Counts: v.counts, Tasks: v.tasks, Brief: v.brief, MoreOpen: v.moreOpen}
	if l.Tasks == nil {
		l.Tasks = []tasksessiond.Task{}
	}
	if v.shortened {
		l.Note = "Shortened to fit: TaskGet shows any task in full."
	}
	for st, r := range v.omitted {
		if l.Omitted == nil {
			l.Omitted = map[string]string{}
		}
		l.Omitted[string(st)] = r
	}
	return l
}

// listingLength is the length of v's structured result as JSON text.
func listingLength(v view, measure func(string) int) int {
	b, err := json.Marshal(v.listing())
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
	fmt.Fprintf(b, "Tasks: %s.\n", countsText(st.Counts()))
	for t := range st.All() {
		b.WriteString("\n")
		writeTask(b, t)
	}
}

const emptyList = "The task list is empty. Use TaskCreate to plan the work."

// ParseList reads back the tasks of a text WriteList wrote (in the order
// written), and whether text is such a text: a subject is one line, and
// each line of a description is indented, so the text says where each
// task and each description begins and ends.
func ParseList(text string) ([]tasksessiond.Task, bool) {
	if text == emptyList {
		return []tasksessiond.Task{}, true
	}
	head, body, ok := strings.Cut(text, "\n")
	if !ok || !strings.HasPrefix(head, "Tasks: ") {
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
		if d, ok := strings.CutPrefix(line, "    "); ok && len(tasks) > 0 {
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
		n += len(t.Subject) + len(t.Description) + len(t.Status) + 32 + 4*strings.Count(t.Description, "\n")
	}
	return n
}

func taskResult(st *store.Store, what string, t tasksessiond.Task) Result {
	ch := wire.Written{Message: what, Task: Echo(t), Overview: overview(st)}
	return Result{Content: []wire.Content{{Type: "text", Text: changeText(ch)}}, StructuredContent: ch}
}

// Echo is t as a change's result shows it: a long description shortened
// (the model has just written it; TaskGet shows it whole).
func Echo(t tasksessiond.Task) tasksessiond.Task {
	if utf8.RuneCountInString(t.Description) > maxEchoDescription {
		t.Description = shorten(t.Description, maxEchoDescription)
	}
	return t
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

// The overview after a change lists the tasks in progress (up to
// maxOverviewInProgress) and the next maxOverviewPending pending ones: what
// keeps the model oriented. Every result costs the model's context;
// TaskList is where the whole list lives.
const (
	maxOverviewInProgress = 10
	maxOverviewPending    = 3
	// maxEchoDescription bounds the description echoed in a change.
	maxEchoDescription = 300
)

// overview is the short summary after a change: counts and the open tasks
// that matter now, in taskid order.
func overview(st *store.Store) wire.Overview {
	c := st.Counts()
	ov := wire.Overview{Counts: c, Open: []wire.Brief{}}
	inProgress, pending := 0, 0
	for t := range st.Open() {
		if inProgress == min(c.InProgress, maxOverviewInProgress) && pending == min(c.Pending, maxOverviewPending) {
			break
		}
		switch {
		case t.Status == tasksessiond.InProgress && inProgress < maxOverviewInProgress:
			inProgress++
		case t.Status == tasksessiond.Pending && pending < maxOverviewPending:
			pending++
		default:
			continue
		}
		ov.Open = append(ov.Open, wire.Brief{Taskid: t.Taskid, Status: t.Status, Subject: t.Subject})
	}
	ov.MoreOpen = c.Pending + c.InProgress - len(ov.Open)
	return ov
}

// text renders the overview for the model.
func overviewText(ov wire.Overview) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task list: %s.", countsText(ov.Counts))
	if len(ov.Open) == 0 {
		b.WriteString(" No open tasks.")
		return b.String()
	}
	b.WriteString("\nOpen:")
	for _, t := range ov.Open {
		fmt.Fprintf(&b, "\n  #%d [%s] %s", t.Taskid, t.Status, t.Subject)
	}
	if ov.MoreOpen > 0 {
		fmt.Fprintf(&b, "\n  … and %d more open (TaskList shows every task)", ov.MoreOpen)
	}
	return b.String()
}

func countsText(c tasksessiond.Counts) string {
	noun := "tasks"
	if c.Total == 1 {
		noun = "task"
	}
	return fmt.Sprintf("%d %s (%d pending, %d inprogress, %d completed, %d deleted)",
		c.Total, noun, c.Pending, c.InProgress, c.Completed, c.Deleted)
}

// writeTask writes "#id [status] subject" and the description's lines
// indented; without fmt, as a list of 10,000 tasks is rendered at once.
func writeTask(b *strings.Builder, t tasksessiond.Task) {
	b.WriteByte('#')
	b.WriteString(strconv.Itoa(t.Taskid))
	b.WriteString(" [")
	b.WriteString(string(t.Status))
	b.WriteString("] ")
	b.WriteString(t.Subject)
	if t.Description != "" {
		for line := range strings.SplitSeq(t.Description, "\n") {
			b.WriteString("\n    ")
			b.WriteString(line)
		}
	}
}

func describeChange(before, after tasksessiond.Task) string {
	var parts []string
	if before.Status != after.Status {
		parts = append(parts, "status "+string(before.Status)+" -> "+string(after.Status))
	}
	if before.Subject != after.Subject {
		parts = append(parts, "subject "+strconv.Quote(after.Subject))
	}
	if before.Description != after.Description {
		parts = append(parts, "description")
	}
	head := "#" + strconv.Itoa(after.Taskid) + " " + strconv.Quote(after.Subject)
	if len(parts) == 0 {
		return head + " (no change: the values given were already set)"
	}
	return head + ": " + strings.Join(parts, ", ")
}
