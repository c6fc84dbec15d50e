package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/tasksessiond/tasksessiond/internal/bench"
	"github.com/tasksessiond/tasksessiond/internal/cli"
)

func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tasksessiond bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quick := fs.Bool("quick", false, "a smoke run (under a minute): short phases, small sizes")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof reads it)")
	baseline := fs.String("baseline", bench.DefaultBaseline, "the commit whose binary is measured side by side with this tree's (\"\" for none)")
	only := fs.String("only", "", "run only these parts, comma-separated (e.g. \"side by side\"); the targets of the others are not checked")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tasksessiond bench [flags]

Measure, in one run on temp databases with the daemon's pragmas: raw SQLite
inserts of the log's rows (one per commit and batched) under full and normal
sync; the storage ceilings of three write patterns side by side (the v1
pattern, today's, and an append-only floor: 64 sessions interleaved, group
commits, full sync; calls/s and WAL pages and bytes per call); the no-op
ceiling of the socket; a tool call that is neither logged nor committed; the
daemon's tools/call with 1, 8 and 64 concurrent sessions, as ratios to the
raw and no-op figures; one session's calls through the session manager in
process, without the socket; 64 sessions sustained for 60 s with the WAL's peak
size; replay against a raw scan; compaction of 100, 1,000 and 10,000 tasks;
resume of a compacted session; start-up on a database of many sessions;
memory (heap and RSS) per session and per task; side by side, this tree's
binary and a baseline commit's (--baseline, built from git), each in its own
process, against the raw single-commit loop, with 20 open tasks per session,
in three rounds taken in turn, with the bytes each logged write stores and a
session of 10,000 tasks (TaskList, first call after a restart, compaction).
Last, each performance target, met or missed, from the figures of this run.
The full run takes about four minutes.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), "\nExamples:\n  tasksessiond bench --quick\n  tasksessiond bench --json > bench.json\n")
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	dir, err := bench.TempDir()
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond bench: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "tasksessiond bench: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "tasksessiond bench: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	r, err := bench.Run(ctx, bench.Config{Dir: dir, Quick: *quick, Log: stderr, Baseline: *baseline, Only: *only})
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond bench: %v\n", err)
		return 1
	}
	if *asJSON {
		cli.PrintJSON(stdout, r)
		return 0
	}
	bench.Print(stdout, r)
	return 0
}
