package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// The write-heavy part (issue 44): 64 sessions that have grown to
// thousands of tasks with hundreds in progress, every call a write — a
// TaskCreate, or a TaskUpdate setting a pending task in progress — under
// full sync, against the raw single-commit loop, this tree's binary and a
// baseline's, in rounds taken in turn.

const (
	heavyTasks      = 2000 // each session's tasks when the phase starts
	heavyInProgress = 300  // of them in progress
)

// HeavyResult is the write-heavy part of a run.
type HeavyResult struct {
	Baseline string       `json:"baseline,omitempty"`
	Tasks    int          `json:"tasks"` // each session's when the phase starts
	Rounds   []HeavyRound `json:"rounds"`
}

// HeavyRound is one round: each figure measured once, in turn.
type HeavyRound struct {
	Raw1   float64 `json:"raw1PerSec"`
	Now64  float64 `json:"now64PerSec"`
	Base64 float64 `json:"base64PerSec,omitempty"`
}

func (b *bencher) heavy(ctx context.Context, r *Results) error {
	now, err := b.build(ctx, "now", "")
	if err != nil {
		return fmt.Errorf("build this tree: %w", err)
	}
	var base *binary
	if b.cfg.Baseline != "" {
		if base, err = b.build(ctx, "baseline", b.cfg.Baseline); err != nil {
			fmt.Fprintf(b.cfg.Log, "bench: no baseline: %v\n", err)
			base = nil
		} else {
			r.Heavy.Baseline = b.cfg.Baseline
		}
	}
	r.Heavy.Tasks = heavyTasks
	if b.cfg.Quick {
		r.Heavy.Tasks = heavyTasks / 10
	}
	for range versusRounds {
		var round HeavyRound
		raw, err := b.rawSingle(ctx)
		if err != nil {
			return err
		}
		round.Raw1 = raw.PerSec
		if round.Now64, err = b.heavyMix(ctx, *now); err != nil {
			return fmt.Errorf("this tree: %w", err)
		}
		if base != nil {
			if round.Base64, err = b.heavyMix(ctx, *base); err != nil {
				return fmt.Errorf("baseline %s: %w", b.cfg.Baseline, err)
			}
		}
		r.Heavy.Rounds = append(r.Heavy.Rounds, round)
	}
	return nil
}

// heavyMix runs one binary on a fresh database: 64 sessions seeded with
// heavyTasks tasks each, then every call a write, for a phase.
func (b *bencher) heavyMix(ctx context.Context, bin binary) (rate float64, err error) {
	p, err := b.startProcess(ctx, bin, b.path(bin.name+"-heavy.db"), "full")
	if err != nil {
		return 0, err
	}
	defer func() {
		err = errors.Join(err, p.stop())
		removeDB(p.dbPath)
	}()
	tasks := heavyTasks
	if b.cfg.Quick {
		tasks = heavyTasks / 10
	}
	calls := make([]client.TranscriptCall, 0, tasks+heavyInProgress)
	for i := range tasks {
		calls = append(calls, client.TranscriptCall{Name: tools.TaskCreate, Arguments: mixCreate(i)})
	}
	for i := range min(heavyInProgress, tasks/2) {
		calls = append(calls, client.TranscriptCall{Name: tools.TaskUpdate, Arguments: inProgress(i + 1)})
	}
	c, err := client.Dial(ctx, p.socket)
	if err != nil {
		return 0, err
	}
	ids := make([]string, storageSessions)
	for i := range ids {
		ids[i] = fmt.Sprintf("heavy-%d-%d", time.Now().UnixNano(), i)
		if _, err := c.ReplaySession(ctx, ids[i], calls); err != nil {
			c.Close()
			return 0, fmt.Errorf("seed session: %w", err)
		}
	}
	c.Close()
	firstPending := min(heavyInProgress, tasks/2) + 1
	rate, _, err = b.drive(ctx, p.socket, storageSessions, func(c *client.Client, w, i int) error {
		p := wire.ToolCall{SessionID: ids[w], CallID: fmt.Sprintf("h-%d-%d", w, i)}
		if i%2 == 0 {
			p.Name, p.Arguments = tools.TaskCreate, mixCreate(tasks+i/2)
		} else {
			// The pending tasks in turn; past the last, tasks created
			// in the phase (a TaskUpdate of one in progress still writes).
			p.Name, p.Arguments = tools.TaskUpdate, inProgress(firstPending+i/2)
		}
		return callTool(ctx, c, p)
	})
	return rate, err
}

func inProgress(taskid int) json.RawMessage {
	return fmt.Appendf(nil, `{"taskid":%d,"status":"in_progress"}`, taskid)
}

var heavyRaw = func(r HeavyRound) float64 { return r.Now64 / r.Raw1 }

func (h HeavyResult) over(f func(HeavyRound) float64) Spread {
	var xs []float64
	for _, r := range h.Rounds {
		if x := f(r); x != 0 {
			xs = append(xs, x)
		}
	}
	return spread(xs)
}

func printHeavy(w io.Writer, h HeavyResult) {
	if len(h.Rounds) == 0 {
		return
	}
	base := h.Baseline
	if base == "" {
		base = "none"
	}
	fmt.Fprintf(w, "write-heavy: 64 sessions of %d tasks (%d in progress), every call a TaskCreate or a TaskUpdate to in progress, full sync, %d rounds in turn; baseline %s\n",
		h.Tasks, min(heavyInProgress, h.Tasks/2), len(h.Rounds), base)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\traw 1/commit per s\tnow 64 per s\tbaseline 64 per s\t")
	for i, r := range h.Rounds {
		fmt.Fprintf(tw, "%d\t%.0f\t%.0f\t%.0f\t\n", i+1, r.Raw1, r.Now64, r.Base64)
	}
	tw.Flush()
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ratio over the rounds\tmin\tmedian\tmax\t")
	for _, row := range []struct {
		name string
		f    func(HeavyRound) float64
	}{
		{"now / raw 1/commit", heavyRaw},
		{"baseline / raw 1/commit", func(r HeavyRound) float64 { return safeDiv(r.Base64, r.Raw1) }},
		{"now / baseline", func(r HeavyRound) float64 { return safeDiv(r.Now64, r.Base64) }},
	} {
		if s := h.over(row.f); s != (Spread{}) {
			fmt.Fprintf(tw, "%s\t%.2f×\t%.2f×\t%.2f×\t\n", row.name, s.Min, s.Median, s.Max)
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
}

func heavyTargets(h HeavyResult, add func(name string, met bool, format string, a ...any)) {
	if len(h.Rounds) == 0 {
		return
	}
	s := h.over(heavyRaw)
	add("64 sessions of thousands of tasks, every call a write, full: ≥ 1.5× raw one row per commit", s.Median >= 1.5,
		"median %.2f× (%.2f–%.2f)", s.Median, s.Min, s.Max)
}
