package tools

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tasksessiond/tasksessiond"
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
	ranges     bool // closed tasks as id ranges by status, not a line each
	openMax    int  // open tasks listed; -1: all
}

var ladder = []fitLevel{
	{openDesc: -1, closedDesc: -1, subject: -1, openMax: -1}, // every task in full
	{openDesc: -1, closedDesc: 200, subject: -1, openMax: -1},
	{openDesc: 2000, closedDesc: 0, subject: -1, openMax: -1},
	{openDesc: 500, closedDesc: 0, subject: -1, openMax: -1},
	{openDesc: 160, closedDesc: 0, subject: -1, openMax: -1},
	// Closed tasks are folded into id ranges before an open task's
	// description goes, and long before its subject is cut.
	{openDesc: 160, closedDesc: 0, subject: -1, ranges: true, openMax: -1},
	{openDesc: 60, closedDesc: 0, subject: -1, ranges: true, openMax: -1},
	{openDesc: 0, closedDesc: 0, subject: -1, ranges: true, openMax: -1}, // every open task's id, status and subject
	{openDesc: 0, closedDesc: 0, subject: 80, ranges: true, openMax: -1},
	{openDesc: 0, closedDesc: 0, subject: 40, ranges: true, openMax: -1},
}

// RenderWithin renders tasks (in taskid order) in at most max characters
// (as Length counts them): the counts, then the open tasks, then the
// closed ones, so that whatever a host cuts from the end, the open tasks
// are the last to go. It shows the whole list when it fits; else it
// shortens it step by step: descriptions of closed tasks, then of open
// ones, then closed tasks folded into id ranges, then the rest of the open
// tasks' descriptions, then long subjects; and at last only the counts
// and as many open tasks as fit. What it shortens
// it says, and how to read a task in full (TaskGet), using the names in
// names (the host's names for the tools).
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
// the closed tasks folded into id ranges, and the open ones left out.
type view struct {
	counts    tasksessiond.Counts
	tasks     []tasksessiond.Task            // shown with their descriptions
	brief     []string                       // shown without: "#id [status] subject"
	omitted   map[tasksessiond.Status]string // status -> "#1-#4, #7"
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
	// The closed tasks' id ranges are the same at every level that folds
	// them: made once.
	var folded map[tasksessiond.Status]string
	ranges := func() map[tasksessiond.Status]string {
		if folded == nil {
			folded = map[tasksessiond.Status]string{}
			for _, st := range []tasksessiond.Status{tasksessiond.Completed, tasksessiond.Deleted} {
				// Ranges of ids that alternate with other statuses do not
				// fold; they are capped, so that they never crowd out the
				// open tasks or pass the limit.
				if r := idRanges(tasks, st, limit/4); r != "" {
					folded[st] = r
				}
			}
		}
		return folded
	}
	for i, lv := range ladder {
		if atLeast(tasks, lv) > limit {
			continue // surely too long: not rendered at all
		}
		v := fit(tasks, c, lv, i > 0, names, ranges)
		if measure(v.text) <= limit && extra(v) <= limit {
			return v
		}
	}
	// The open tasks alone do not fit: as many as do, then the count of
	// the rest (the most that fit, found by bisection; none always fits
	// but for the counts line, which truncate then cuts).
	try := func(n int) (view, bool) {
		v := fit(tasks, c, fitLevel{subject: 40, ranges: true, openMax: n}, true, names, ranges)
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
		if closed && lv.ranges {
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

func fit(tasks []tasksessiond.Task, c tasksessiond.Counts, lv fitLevel, shortened bool, names ToolNames, ranges func() map[tasksessiond.Status]string) view {
	// Sized for what this level lists: a try of a few open tasks out of
	// thousands allocates a few, not thousands.
	open, closed := c.Pending+c.InProgress, c.Completed+c.Deleted
	if lv.openMax >= 0 {
		open = min(open, lv.openMax)
	}
	if lv.ranges {
		closed = 0
	}
	v := view{counts: c, shortened: shortened, tasks: make([]tasksessiond.Task, 0, open+closed)}
	var b strings.Builder
	b.WriteString("Tasks: ")
	b.WriteString(countsText(c))
	b.WriteString(".")
	if shortened {
		b.WriteString(" (Shortened to fit; ")
		b.WriteString(names.Get)
		b.WriteString(" shows any task in full.)")
	}
	b.WriteString("\n")
	// The open tasks first, then the closed ones: a host that cuts a long
	// text from its end (or the model that stops reading) loses the
	// closed tasks, not the plan ahead.
	listed := 0
	for _, t := range tasks {
		if !t.Status.Open() {
			continue
		}
		if lv.openMax >= 0 && listed >= lv.openMax {
			break
		}
		listed++
		b.WriteString("\n")
		v.add(writeShort(&b, t, lv.subject, lv.openDesc))
	}
	if all := c.Pending + c.InProgress; lv.openMax >= 0 && listed < all {
		v.moreOpen = all - listed
		b.WriteString("\n… and ")
		b.WriteString(strconv.Itoa(v.moreOpen))
		b.WriteString(" more open tasks, left out to fit (")
		b.WriteString(names.Get)
		b.WriteString(" shows any task by its taskid)")
	}
	if !lv.ranges {
		for _, t := range tasks {
			if t.Status.Open() {
				continue
			}
			b.WriteString("\n")
			v.add(writeShort(&b, t, lv.subject, lv.closedDesc))
		}
	}
	if lv.ranges {
		folded := ranges()
		for _, st := range []tasksessiond.Status{tasksessiond.Completed, tasksessiond.Deleted} {
			if r, ok := folded[st]; ok {
				if v.omitted == nil {
					v.omitted = map[tasksessiond.Status]string{}
				}
				v.omitted[st] = r
				b.WriteString("\n")
				b.WriteString(string(st))
				b.WriteString(": ")
				b.WriteString(r)
			}
		}
	}
	v.text = b.String()
	return v
}

// writeShort is writeTask with the subject cut to subject characters and
// the description to desc (-1: whole; 0: left out), saying what was cut.
// It returns the task as shown, and whether it is shown brief (without
// its description).
func writeShort(b *strings.Builder, t tasksessiond.Task, subject, desc int) (tasksessiond.Task, bool) {
	if subject >= 0 {
		t.Subject = cut(t.Subject, subject)
	}
	switch {
	case desc == 0:
		// The header says the list was shortened and how to read a task
		// whole; a marker on every line would cost more than it tells.
		t.Description = ""
		writeTask(b, t)
		return t, true
	case desc > 0:
		t.Description = shorten(t.Description, desc)
	}
	writeTask(b, t)
	return t, false
}

// add lists t in the structured result: with its description, or brief, as
// a line "#id [status] subject" (a third of the JSON of an object without
// its description: a list of hundreds of open tasks fits a host's budget
// of 10,000 bytes).
func (v *view) add(t tasksessiond.Task, brief bool) {
	if !brief {
		v.tasks = append(v.tasks, t)
		return
	}
	var b strings.Builder
	writeTask(&b, t)
	v.brief = append(v.brief, b.String())
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

// idRanges lists the ids of tasks with status st as "#1-#4, #7", in at
// most about max bytes ("…, and 120 more" past it).
func idRanges(tasks []tasksessiond.Task, st tasksessiond.Status, max int) string {
	var b strings.Builder
	first, last, left := 0, 0, 0
	flush := func() {
		if first == 0 {
			return
		}
		if b.Len() > max {
			left += last - first + 1 // a range holds every id it spans
			return
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString("#" + strconv.Itoa(first))
		if last != first {
			b.WriteString("-#" + strconv.Itoa(last))
		}
	}
	for _, t := range tasks {
		if t.Status != st {
			continue
		}
		if first != 0 && t.Taskid == last+1 {
			last = t.Taskid
			continue
		}
		flush()
		first, last = t.Taskid, t.Taskid
	}
	flush()
	if left > 0 {
		b.WriteString(", … and " + strconv.Itoa(left) + " more")
	}
	return b.String()
}
