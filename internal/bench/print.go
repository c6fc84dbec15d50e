package bench

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

// Print writes the results as tables.
func Print(w io.Writer, r *Results) {
	mode := "full"
	if r.Quick {
		mode = "quick"
	}
	fmt.Fprintf(w, "tasksessiond bench (%s run, %s): %s/%s, %d CPUs, %s\n\n", mode, r.Took.Round(time.Second), r.Machine.GOOS, r.Machine.GOARCH, r.Machine.CPUs, r.Machine.Go)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "what\tsync\tclients\tper s\tp50\tp99\tp99.9\tvs no-op\tvs raw 1/commit\t")
	rows := slices.Concat(r.Raw, r.Noop, r.Unlogged, r.Daemon)
	if r.InProcess.PerSec > 0 {
		rows = append(rows, r.InProcess)
	}
	for _, x := range rows {
		clients := ""
		if x.Clients > 0 {
			clients = fmt.Sprint(x.Clients)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t\n", x.Name, x.Sync, clients, x.PerSec,
			us(x.Latency.P50), us(x.Latency.P99), us(x.Latency.P999), ratio(x.VsNoop), ratio(x.VsRawSingle))
	}
	tw.Flush()
	fmt.Fprintln(w)

	if len(r.Storage) > 0 {
		fmt.Fprintf(w, "storage ceilings: SQLite alone, full sync, %d sessions interleaved, groups of %d calls, %d rounds in turn\n", storageSessions, storageGroup, storageRounds)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "write pattern\tcalls/s\tWAL pages/call\tWAL bytes/call\tvs floor\t")
		for _, x := range r.Storage {
			fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.0f\t%s\t\n", x.Name, x.PerSec, x.FramesPerCall, x.BytesPerCall, ratio(x.VsFloor))
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	if r.Sustained.Took > 0 {
		fmt.Fprintf(w, "sustained: %d sessions for %s, full sync: %.0f calls/s, WAL peak %.1f MiB\n\n",
			r.Sustained.Sessions, r.Sustained.Took, r.Sustained.PerSec, float64(r.Sustained.WALPeak)/(1<<20))
	}

	if r.Replay.Rows == 0 { // a run of some parts only
		printVersus(w, r.Versus)
		printHeavy(w, r.Heavy)
		printTargets(w, r.Targets)
		return
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "replay\t%d rows: %.0f rows/s, raw scan %.0f rows/s: %.0f%% of the scan\n", r.Replay.Rows, r.Replay.PerSec, r.Replay.ScanPerSec, 100*r.Replay.Ratio)
	for _, c := range r.Compaction {
		fmt.Fprintf(tw, "compaction\t%d tasks: %s\n", c.Tasks, ms(c.Took))
	}
	fmt.Fprintf(tw, "resume\tcompacted session of %d tasks: %s with a %d-call ancestor, %s with a %d-call one (ratio %.2f)\n",
		r.Resume.Tasks, ms(r.Resume.LongTook), r.Resume.LongAncestor, ms(r.Resume.ShortTook), r.Resume.ShortAncestor, r.Resume.Ratio)
	fmt.Fprintf(tw, "start-up\t%d sessions in the database: serving after %s\n", r.Startup.Sessions, ms(r.Startup.Took))
	fmt.Fprintf(tw, "memory\t%d loaded sessions: heap %.0f B per session, %.0f B per task (%d tasks, %d logged calls each)\n",
		r.Memory.Sessions, r.Memory.BytesPerSession, r.Memory.BytesPerTask, r.Memory.TasksPerSession, 3*r.Memory.TasksPerSession)
	if r.Memory.RSSPerSession != 0 {
		fmt.Fprintf(tw, "\tRSS %.0f B per session, %.0f B per task\n", r.Memory.RSSPerSession, r.Memory.RSSPerTask)
	}
	tw.Flush()

	fmt.Fprintln(w)
	printVersus(w, r.Versus)
	printHeavy(w, r.Heavy)
	printTargets(w, r.Targets)
}

func printTargets(w io.Writer, targets []Target) {
	if len(targets) > 0 {
		fmt.Fprintln(w, "\ntargets (ratios from this run):")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, t := range targets {
			verdict := "missed"
			if t.Met {
				verdict = "met"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", verdict, t.Name, t.Measured)
		}
		tw.Flush()
	}
}

func us(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }

func ratio(x float64) string {
	if x == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f×", x)
}
