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
	fleet := fs.Bool("fleet", false, "measure fleet mode instead: calls/s at 64 sessions with 1, 2 and 4 daemons on one PostgreSQL beside one daemon on SQLite, all durable, and the takeover of a 10,000-call session after kill -9 (docs/FLEET.md)")
	postgres := fs.String("postgres", "", "with --fleet: a postgres:// URL whose role may create databases (default: a scratch server started from the installed PostgreSQL binaries)")
	lease := fs.Duration("lease", 0, "with --fleet: the lease of the takeover (default 10s, 1s with --quick)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof reads it)")
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
memory (heap and RSS) per session and per task. Last, each performance
target, met or missed, from the figures of this run.
The full run takes about four minutes.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), "\nExamples:\n  tasksessiond bench --quick\n  tasksessiond bench --fleet\n  tasksessiond bench --json > bench.json\n")
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
	if *fleet {
		return benchFleet(ctx, bench.FleetConfig{Dir: dir, Postgres: *postgres, Quick: *quick, Lease: *lease, Log: stderr}, *asJSON, stdout, stderr)
	}
	r, err := bench.Run(ctx, bench.Config{Dir: dir, Quick: *quick, Log: stderr})
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

func benchFleet(ctx context.Context, cfg bench.FleetConfig, asJSON bool, stdout, stderr io.Writer) int {
	bin, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond bench: %v\n", err)
		return 1
	}
	cfg.Binary = bin
	r, err := bench.Fleet(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond bench: %v\n", err)
		return 1
	}
	if asJSON {
		cli.PrintJSON(stdout, r)
		return 0
	}
	bench.PrintFleet(stdout, r)
	return 0
}
