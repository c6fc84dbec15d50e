// Command tsdbench measures tasksessiond against its physical limits and
// against a baseline commit, in one run: `go run ./cmd/tsdbench --quick`.
// It lives apart from the daemon's binary, which ships without it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/tasksessiond/tasksessiond/internal/bench"
	"github.com/tasksessiond/tasksessiond/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tsdbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quick := fs.Bool("quick", false, "a smoke run (under a minute): short phases, small sizes")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	fleet := fs.Bool("fleet", false, "measure fleet mode instead: calls/s at 64 sessions with 1, 2 and 4 daemons on one PostgreSQL beside one daemon on SQLite, all durable, and the takeover of a 10,000-call session after kill -9 (docs/FLEET.md)")
	postgres := fs.String("postgres", "", "with --fleet: a postgres:// URL whose role may create databases (default: a scratch server started from the installed PostgreSQL binaries)")
	lease := fs.Duration("lease", 0, "with --fleet: the lease of the takeover (default 10s, 1s with --quick)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof reads it)")
	baseline := fs.String("baseline", bench.DefaultBaseline, "the commit whose binary is measured side by side with this tree's (\"\" for none)")
	only := fs.String("only", "", "run only these parts, comma-separated (e.g. \"side by side\"); the targets of the others are not checked")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: go run ./cmd/tsdbench [flags]

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
		fmt.Fprint(fs.Output(), "\nExamples:\n  go run ./cmd/tsdbench --quick\n  go run ./cmd/tsdbench --json > bench.json\n  go run ./cmd/tsdbench --fleet\n  go run ./cmd/tsdbench --only \"side by side\" --baseline 35edbf9\n")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	dir, err := bench.TempDir()
	if err != nil {
		fmt.Fprintf(stderr, "tsdbench: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "tsdbench: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "tsdbench: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if *fleet {
		return benchFleet(ctx, bench.FleetConfig{Dir: dir, Postgres: *postgres, Quick: *quick, Lease: *lease, Log: stderr}, *asJSON, stdout, stderr)
	}
	r, err := bench.Run(ctx, bench.Config{Dir: dir, Quick: *quick, Log: stderr, Baseline: *baseline, Only: *only})
	if err != nil {
		fmt.Fprintf(stderr, "tsdbench: %v\n", err)
		return 1
	}
	if *asJSON {
		if err := cli.PrintJSON(stdout, r); err != nil {
			fmt.Fprintf(stderr, "tsdbench: %v\n", err)
			return 1
		}
		return 0
	}
	bench.Print(stdout, r)
	return 0
}

// benchFleet runs the fleet measurements on a daemon built from this tree.
func benchFleet(ctx context.Context, cfg bench.FleetConfig, asJSON bool, stdout, stderr io.Writer) int {
	bin, err := bench.Build(ctx, cfg.Dir, "fleet", "")
	if err != nil {
		fmt.Fprintf(stderr, "tsdbench: %v\n", err)
		return 1
	}
	cfg.Binary = bin
	r, err := bench.Fleet(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "tsdbench: %v\n", err)
		return 1
	}
	if asJSON {
		if err := cli.PrintJSON(stdout, r); err != nil {
			fmt.Fprintf(stderr, "tsdbench: %v\n", err)
			return 1
		}
		return 0
	}
	bench.PrintFleet(stdout, r)
	return 0
}
