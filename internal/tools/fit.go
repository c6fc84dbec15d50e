package tools

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/wire"
)

// Size limits of what a host puts before the model. Hosts cut or preview
// text past their own limits (Claude Code keeps a hook's context up to
// 10,000 characters and previews a tool result from about 50 KB), and
// what is cut is lost to the model, so the list is shortened by us, in a
// way that keeps it useful, before the host would.
const (
	// MaxResultChars bounds the text of a tool result.
	MaxResultChars = 40_000
	// MaxHookChars bounds the context a hook adds.
	MaxHookChars = 9_500
)

// Length counts s as hosts written in JavaScript do: in UTF-16 code
// units, so a character outside the BMP counts twice.
func Length(s string) int {
	n := 0
	for _, r := range s {
		if r > 0xFFFF {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// fitLevel is one step of the ladder that RenderWithin walks down until the
// list fits: each step gives up a little more detail, closed tasks before
// open ones, descriptions before subjects, and ids and statuses last.
type fitLevel struct {
	openDesc   int  // characters of an open task's description kept; -1: all
	closedDesc int  // same for completed and deleted tasks; 0: none
	subject    int  // characters of a subject kept; -1: all
	fold       bool // runs of closed tasks as one line each ("#1–#40 completed")
	hideClosed bool // closed tasks left out (the counts still say them)
	openMax    int  // open tasks listed; -1: all
}

var ladder = []fitLevel{
	{openDesc: -1, closedDesc: -1, subject: -1, openMax: -1}, // every task in full
	{openDesc: -1, closedDesc: 200, subject: -1, openMax: -1},
	{openDesc: 2000, closedDesc: 0, subject: -1, openMax: -1},
	{openDesc: 500, closedDesc: 0, subject: -1, openMax: -1},
	{openDesc: 160, closedDesc: 0, subject: -1, openMax: -1},
	// Closed tasks are folded in place before an open task's description
	// goes, and long before its subject is cut.
	{openDesc: 160, subject: -1, fold: true, openMax: -1},
	{openDesc: 60, subject: -1, fold: true, openMax: -1},
	{subject: -1, fold: true, openMax: -1}, // every open task's id, status and subject
	{subject: 80, fold: true, openMax: -1},
	{subject: 40, fold: true, openMax: -1},
	// Closed tasks that alternate with open ones fold into many lines:
	// they go before any open task does.
	{subject: 40, hideClosed: true, openMax: -1},
}

// RenderWithin renders tasks (in taskid order) in at most max characters
// (as Length counts them): the counts, then the tasks in taskid order. It
// shows the whole list when it fits; else it shortens it step by step:
// descriptions of closed tasks, then of open ones, then runs of closed
// tasks folded in place ("#1–#40 completed"), then the rest of the open
// tasks' descriptions, then long subjects, then the closed tasks left out;
// and at last only the counts and as many open tasks as fit. What it
// shortens it says, and how to read a task whole (TaskGet), using the
// names in names (the host's names for the tools).
func RenderWithin(tasks []tasksessiond.Task, max int, names ToolNames) string {
	return RenderWithinBy(tasks, max, names, Length)
}

// RenderWithinBy is RenderWithin with the text measured by measure (Codex
// CLI counts a hook's output in UTF-8 bytes, where Claude Code counts
// characters).
func RenderWithinBy(tasks []tasksessiond.Task, max int, names ToolNames, measure func(string) int) string {
	return fitList(tasks, max, names, measure, func(v view) int { return 0 }).text
}

// ToolNames are the tool names as the host shows them to the model.
type ToolNames struct{ Create, List, Get, Update string }

// PlainNames are the tools' own names.
var PlainNames = PrefixedNames("")

// PrefixedNames are the names with prefix in front (Claude Code shows an
// MCP server's tools as mcp__<server>__<tool>).
func PrefixedNames(prefix string) ToolNames {
	return ToolNames{Create: prefix + TaskCreate, List: prefix + TaskList, Get: prefix + TaskGet, Update: prefix + TaskUpdate}
}

// view is a list as fitted: the tasks shown (shortened as its level says),
// the runs of closed tasks folded, and the open ones left out.
type view struct {
	counts    tasksessiond.Counts
	tasks     []tasksessiond.Task // shown, in taskid order
	folded    []wire.Fold
	moreOpen  int
	shortened bool
	text      string
}

// fitList walks the ladder down until the view's text, and whatever else
// extra measures (the structured result's JSON), is at most max.
func fitList(tasks []tasksessiond.Task, limit int, names ToolNames, measure func(string) int, extra func(view) int) view {
	c := tasksessiond.CountOf(tasks)
	if len(tasks) == 0 {
		return view{counts: c, tasks: []tasksessiond.Task{}, text: "The task list is empty. Use " + names.Create + " to plan the work."}
	}
	for i, lv := range ladder {
		if atLeast(tasks, lv) > limit {
			continue // surely too long: not rendered at all
		}
		v := fit(tasks, c, lv, i > 0, names)
		if measure(v.text) <= limit && extra(v) <= limit {
			return v
		}
	}
	// The open tasks alone do not fit: as many as do, then the count of
	// the rest (the most that fit, found by bisection; none always fits
	// but for the counts line, which truncate then cuts).
	try := func(n int) (view, bool) {
		v := fit(tasks, c, fitLevel{subject: 40, hideClosed: true, openMax: n}, true, names)
		return v, measure(v.text) <= limit && extra(v) <= limit
	}
	lo, hi := narrow(c.Pending+c.InProgress, limit, func(n int) (int, bool) {
		v, ok := try(n)
		return max(measure(v.text), extra(v)), ok
	})
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if _, ok := try(mid); ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	v, _ := try(lo)
	if measure(v.text) > limit { // the counts line alone is too long
		v.text = cutTo(v.text, limit, measure)
	}
	return v
}

// narrow brackets the most open tasks that fit, [lo, hi) with lo fitting
// (or 0) and hi not, for the bisection to finish: the size of a list grows
// near linearly with the tasks it lists, so a fit of a few predicts where
// the limit lies, and a gallop from there brackets it in a few more fits
// instead of a bisection over every open task (a dozen fits of a list of
// thousands). size returns the larger of the two lengths measured, and
// whether n fits.
func narrow(open, limit int, size func(n int) (int, bool)) (lo, hi int) {
	if open <= 16 {
		return 0, open
	}
	s0, ok0 := size(0)
	if !ok0 {
		return 0, 1 // not even the counts: the bisection has nothing to do
	}
	const probe = 16
	sp, okp := size(probe)
	if !okp {
		return 0, probe
	}
	per := float64(sp-s0) / probe
	est := open
	if per > 0 {
		est = min(open, int(float64(limit-s0)/per))
	}
	est = max(est, probe)
	step := max(open/256, 4)
	if _, ok := size(est); ok {
		lo, hi = est, open+1
		for lo+step <= open {
			if _, ok := size(lo + step); !ok {
				return lo, lo + step
			}
			lo += step
			step *= 2
		}
		return lo, hi
	}
	hi, lo = est, probe
	for hi-step > probe {
		if _, ok := size(hi - step); ok {
			return hi - step, hi
		}
		hi -= step
		step *= 2
	}
	return lo, hi
}

// cutTo keeps the longest prefix of s that measures at most max (found by
// bisection: a prefix never measures more than a longer one).
func cutTo(s string, max int, measure func(string) int) string {
	r := []rune(s)
	lo, hi := 0, len(r)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if measure(string(r[:mid])) <= max {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return string(r[:lo])
}

// atLeast is a cheap lower bound on the length of tasks rendered at lv
// (a character takes at most three bytes of UTF-8 per UTF-16 unit), so
// that a level which cannot fit is skipped without rendering it.
func atLeast(tasks []tasksessiond.Task, lv fitLevel) int {
	n := 0
	for _, t := range tasks {
		closed := !t.Status.Open()
		if closed && (lv.fold || lv.hideClosed) {
			continue
		}
		subject := len(t.Subject) / 3
		if lv.subject >= 0 {
			subject = min(subject, lv.subject)
		}
		desc := lv.openDesc
		if closed {
			desc = lv.closedDesc
		}
		d := len(t.Description) / 3
		if desc >= 0 {
			d = min(d, desc)
		}
		n += subject + d + 8 // "#1 [x] "
	}
	return n
}

func fit(tasks []tasksessiond.Task, c tasksessiond.Counts, lv fitLevel, shortened bool, names ToolNames) view {
	// Sized for what this level lists: a try of a few open tasks out of
	// thousands allocates a few, not thousands.
	n := c.Total
	if lv.fold || lv.hideClosed {
		n = c.Pending + c.InProgress
	}
	if lv.openMax >= 0 {
		n = min(n, lv.openMax)
	}
	v := view{counts: c, shortened: shortened, tasks: make([]tasksessiond.Task, 0, n)}
	var b strings.Builder
	b.WriteString(listHead)
	b.WriteString(countsText(c, nil))
	b.WriteString(".")
	if shortened {
		b.WriteString(" (Shortened to fit; ")
		b.WriteString(names.Get)
		b.WriteString(" shows any task whole.)")
	}
	b.WriteString("\n")
	// In taskid order, the store's: a task keeps its place whatever its
	// status, and a run of closed tasks folds where it stands.
	var run *wire.Fold
	flush := func() {
		if run == nil {
			return
		}
		v.folded = append(v.folded, *run)
		b.WriteString("\n#")
		b.WriteString(strconv.Itoa(run.From))
		if run.To != run.From {
			b.WriteString("–#")
			b.WriteString(strconv.Itoa(run.To))
		}
		b.WriteByte(' ')
		b.WriteString(string(run.Status))
		run = nil
	}
	listed := 0
	for _, t := range tasks {
		if !t.Status.Open() {
			switch {
			case lv.hideClosed:
			case lv.fold && run != nil && run.Status == t.Status:
				run.To = t.Taskid
			case lv.fold:
				flush()
				run = &wire.Fold{From: t.Taskid, To: t.Taskid, Status: t.Status}
			default:
				b.WriteString("\n")
				v.tasks = append(v.tasks, writeShort(&b, t, lv.subject, lv.closedDesc))
			}
			continue
		}
		flush()
		if lv.openMax >= 0 && listed >= lv.openMax {
			v.moreOpen++
			continue
		}
		listed++
		b.WriteString("\n")
		v.tasks = append(v.tasks, writeShort(&b, t, lv.subject, lv.openDesc))
	}
	flush()
	if v.moreOpen > 0 {
		b.WriteString("\n… and ")
		b.WriteString(strconv.Itoa(v.moreOpen))
		b.WriteString(" more open tasks, left out to fit (")
		b.WriteString(names.Get)
		b.WriteString(" shows any task by its taskid)")
	}
	v.text = b.String()
	return v
}

// writeShort is writeTask with the subject cut to subject characters and
// the description to desc (-1: whole; 0: left out), saying what was cut.
// It returns the task as shown.
func writeShort(b *strings.Builder, t tasksessiond.Task, subject, desc int) tasksessiond.Task {
	if subject >= 0 {
		t.Subject = cut(t.Subject, subject)
	}
	switch {
	case desc == 0:
		// The header says the list was shortened and how to read a task
		// whole; a marker on every line would cost more than it tells.
		t.Description = ""
	case desc > 0:
		t.Description = shorten(t.Description, desc)
	}
	writeTask(b, t)
	return t
}

// shorten cuts a description to n characters, saying how long it was.
func shorten(s string, n int) string {
	short := cut(s, n)
	if short != s {
		short += " [" + strconv.Itoa(utf8.RuneCountInString(s)) + " characters in all]"
	}
	return short
}

// cut keeps the first n characters of s, marking a cut with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " \n") + "…"
}
