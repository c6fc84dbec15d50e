package board_test

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/wire"
)

// BenchmarkBoard measures the page in a real browser: the time to first
// paint of the data (from navigation start to the frame after the list, and
// the open board if any, is drawn) and the time to apply one change (from
// the event's arrival in the page to the frame after it is drawn), for
//
//	empty:         one session without tasks, open;
//	300-sessions:  300 sessions of five tasks in the list, a TaskCreate
//	               in one of them (its row is redrawn);
//	10000-tasks:   one session of 10,000 tasks open, a TaskUpdate moving a
//	               pending one to completed.
//
// Each reports paint-ms and apply-ms, and the same as ratios against the
// empty board (paint-x, apply-x). Without chromium it is skipped.
//
//	go test -run '^$' -bench Board -benchtime 5x ./internal/board/
func BenchmarkBoard(b *testing.B) {
	for _, sc := range scenarios {
		b.Run(sc.name, func(b *testing.B) {
			f := startBoard(b)
			open, change := sc.setup(b, f)
			base := emptyBaseline(b)
			var paint, full, apply []float64
			for i := 0; b.Loop(); i++ {
				m := measure(b, f, open, sc.kind, func() { change(i) })
				paint, full, apply = append(paint, m.paint), append(full, m.full), append(apply, m.apply)
			}
			p, fl, a := median(paint), median(full), median(apply)
			b.ReportMetric(p, "paint-ms")
			b.ReportMetric(fl, "full-ms")
			b.ReportMetric(a, "apply-ms")
			b.ReportMetric(p/base.paint, "paint-x")
			b.ReportMetric(fl/base.full, "full-x")
			b.ReportMetric(a/base.apply, "apply-x")
		})
	}
}

type scenario struct {
	name  string
	kind  string // the page event a change makes: task or session
	setup func(testing.TB, *fixture) (open string, change func(i int))
}

var scenarios = []scenario{
	{"empty", "task", setupEmpty},
	{"300-sessions", "session", func(tb testing.TB, f *fixture) (string, func(int)) {
		var ids []string
		for i := range 300 {
			s, err := f.c.CreateSession(bg, wire.CreateSession{Title: fmt.Sprintf("Session %d", i)})
			require.NoError(tb, err)
			ids = append(ids, s.ID)
			for j := range 5 {
				createTask(tb, f.c, s.ID, fmt.Sprintf("Task %d of session %d", j+1, i), "")
			}
			updateTask(tb, f.c, s.ID, 1, "completed")
		}
		return "", func(i int) { createTask(tb, f.c, ids[i%len(ids)], fmt.Sprintf("Change %d", i), "") }
	}},
	{"10000-tasks", "task", func(tb testing.TB, f *fixture) (string, func(int)) {
		// One sessions/replay builds it: 10,000 calls one by one would
		// dominate the benchmark's setup.
		var calls []client.TranscriptCall
		for i := 1; i <= 10000; i++ {
			calls = append(calls, client.TranscriptCall{Name: "TaskCreate", Arguments: map[string]any{"subject": fmt.Sprintf("Task %d", i)}})
		}
		for i := 1; i <= 10000; i++ {
			status := ""
			switch {
			case i%5 == 1 || i%5 == 2:
				status = "completed"
			case i%50 == 3:
				status = "inprogress"
			case i%100 == 8:
				status = "deleted"
			}
			if status != "" {
				calls = append(calls, client.TranscriptCall{Name: "TaskUpdate", Arguments: map[string]any{"taskid": i, "status": status}})
			}
		}
		r, err := f.c.ReplaySession(bg, "big", calls)
		require.NoError(tb, err)
		require.Equal(tb, 10000, r.Session.Counts.Total)
		// Task 5k+4 is pending: each change moves one to completed.
		return "big", func(i int) { updateTask(tb, f.c, "big", 5*(i%1999)+4, "completed") }
	}},
}

func setupEmpty(tb testing.TB, f *fixture) (string, func(int)) {
	s, err := f.c.CreateSession(bg, wire.CreateSession{Title: "Empty"})
	require.NoError(tb, err)
	return s.ID, func(i int) { createTask(tb, f.c, s.ID, fmt.Sprintf("Change %d", i), "") }
}

// times are one measurement, in milliseconds: the first paint of the data,
// the paint of the whole board (a long one is drawn in chunks, a frame at
// a time), and one change.
type times struct{ paint, full, apply float64 }

// measure opens the page in a new tab, waits until it is wholly drawn, then
// makes one change.
func measure(tb testing.TB, f *fixture, open, kind string, change func()) times {
	tb.Helper()
	ctx := tab(tb)
	u := f.url
	if open != "" {
		u += "#" + open
	}
	require.NoError(tb, chromedp.Do(ctx, chromedp.Navigate(u)))
	waitFor(tb, ctx, `document.body.dataset.ready === '1'`, 60*time.Second)
	var m times
	m.paint, m.full = eval[float64](tb, ctx, `window.__board.ready`), eval[float64](tb, ctx, `window.__board.ready`)
	if open != "" {
		waitFor(tb, ctx, `window.__board.complete > 0`, 60*time.Second)
		m.full = eval[float64](tb, ctx, `window.__board.complete`)
	}
	n := eval[int](tb, ctx, `window.__board.applies.length`)
	change()
	cond := fmt.Sprintf(`window.__board.applies.slice(%d).some(a => a.kind === %q)`, n, kind)
	waitFor(tb, ctx, cond, 30*time.Second)
	m.apply = eval[float64](tb, ctx, fmt.Sprintf(`(() => { const a = window.__board.applies.slice(%d).find(a => a.kind === %q); return a.painted - a.received; })()`, n, kind))
	// Close the tab now: a benchmark's tabs would otherwise pile up until it ends.
	chromedp.Cancel(ctx)
	return m
}

// emptyBaseline is the empty board's times, the denominators of the
// ratios, measured once per run (five times, the median).
func emptyBaseline(b *testing.B) times {
	baseline.once.Do(func() {
		f := startBoard(b)
		open, change := setupEmpty(b, f)
		var paint, full, apply []float64
		for i := range 5 {
			m := measure(b, f, open, "task", func() { change(1000 + i) })
			paint, full, apply = append(paint, m.paint), append(full, m.full), append(apply, m.apply)
		}
		baseline.v = times{median(paint), median(full), median(apply)}
	})
	return baseline.v
}

var baseline struct {
	once sync.Once
	v    times
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
