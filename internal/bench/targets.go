package bench

import (
	"fmt"
	"time"
)

// Target is one of the performance targets, as this run measured it.
type Target struct {
	Name     string `json:"name"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
}

// targets checks the run against the project's performance targets; every
// ratio in them is between figures of this same run.
func targets(r *Results) []Target {
	var out []Target
	add := func(name string, met bool, format string, a ...any) {
		out = append(out, Target{Name: name, Measured: fmt.Sprintf(format, a...), Met: met})
	}
	var raw1, daemon1 *Rate
	for i := range r.Raw {
		if x := &r.Raw[i]; x.Sync == "full" && x.Name == "raw insert, one row per commit" {
			raw1 = x
		}
	}
	for i := range r.Daemon {
		if x := &r.Daemon[i]; x.Sync == "full" && x.Clients == 1 {
			daemon1 = x
		}
	}
	if raw1 != nil && daemon1 != nil {
		over := daemon1.Latency.P50 - raw1.Latency.P50
		inProcess := ""
		if p := r.InProcess.Latency.P50; p > 0 {
			inProcess = fmt.Sprintf(" (in process, no socket: %s)", us(p))
		}
		add("1 session, full, in this process: p50 ≤ raw single-commit p50 + 300µs", over <= 300*time.Microsecond,
			"%s vs %s: +%s%s", us(daemon1.Latency.P50), us(raw1.Latency.P50), us(max(over, time.Microsecond)), inProcess)
	}
	versusTargets(r.Versus, add)
	heavyTargets(r.Heavy, add)
	if r.Sustained.Took > 0 {
		add(fmt.Sprintf("WAL peak ≤ 64 MiB through a %s run at 64 sessions", r.Sustained.Took), r.Sustained.WALPeak <= 64<<20,
			"%.1f MiB at %.0f calls/s", float64(r.Sustained.WALPeak)/(1<<20), r.Sustained.PerSec)
	}
	for _, c := range r.Compaction {
		if c.Tasks == 10_000 {
			add("compaction of 10,000 tasks < 50 ms", c.Took < 50*time.Millisecond, "%s", ms(c.Took))
		}
	}
	if r.Replay.ScanPerSec > 0 {
		add("replay ≥ 50% of a raw scan", r.Replay.Ratio >= 0.5, "%.0f%%", 100*r.Replay.Ratio)
	}
	return out
}
