package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tasksessiond/tasksessiond/internal/cli"
	"github.com/tasksessiond/tasksessiond/internal/crashtest"
)

func crashtestCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tasksessiond crashtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cycles := fs.Int("cycles", 20, "kill/restart cycles")
	clients := fs.Int("clients", 16, "concurrent client sessions")
	seed := fs.Uint64("seed", uint64(time.Now().UnixNano()), "random seed (printed, to rerun a failure)")
	maxRun := fs.Duration("max-run", 300*time.Millisecond, "longest run before each kill")
	syncMode := fs.String("sync", "full", "the daemon's --sync")
	dir := fs.String("dir", "", "directory for the database and socket (default: a new temp dir, removed after a clean run)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	verbose := fs.Bool("v", false, "print a line per cycle")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: tasksessiond crashtest [flags]

The crash harness: run this binary's daemon, drive it with concurrent clients
issuing random valid and invalid calls (and compactions), SIGKILL it at a
random moment, restart it, and verify that every acknowledged call is in the
log exactly once, a call in flight at the kill is wholly present or absent
and applies once when retried by callId, every store equals a model of the
acknowledged calls, and fsck (integrity_check included) is clean.
Exits 1 on any fault.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(stderr, "\nExamples:\n  tasksessiond crashtest --cycles 20\n  tasksessiond crashtest --cycles 1000 --json\n")
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	bin, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond crashtest: %v\n", err)
		return 1
	}
	work := *dir
	if work == "" {
		if work, err = os.MkdirTemp("", "tsd-crash"); err != nil {
			fmt.Fprintf(stderr, "tasksessiond crashtest: %v\n", err)
			return 1
		}
	}
	cfg := crashtest.Config{Binary: bin, Dir: work, Cycles: *cycles, Clients: *clients, Seed: *seed, MaxRun: *maxRun, Sync: *syncMode}
	if *verbose {
		cfg.Log = stderr
	}
	fmt.Fprintf(stderr, "crashtest: %d cycles, %d clients, seed %d, in %s\n", *cycles, *clients, *seed, work)
	start := time.Now()
	r, err := crashtest.Run(ctx, cfg)
	if *asJSON {
		cli.PrintJSON(stdout, r)
	} else {
		fmt.Fprintf(stdout, "cycles %d, acknowledged %d, in flight at a kill %d (landed %d), retried %d, compactions %d\n",
			r.Cycles, r.Acknowledged, r.InFlight, r.InFlightLanded, r.Retried, r.Compactions)
		fmt.Fprintf(stdout, "lost %d, doubled %d, store mismatches %d, result mismatches %d, fsck problems %d (%s)\n",
			r.Lost, r.Doubled, r.StoreMismatches, r.ResultMismatches, r.FsckProblems, time.Since(start).Round(time.Millisecond))
	}
	if err != nil || !r.OK() {
		fmt.Fprintf(stderr, "crashtest: FAILED (seed %d, data kept in %s): %v\n", *seed, work, err)
		return 1
	}
	if *dir == "" {
		os.RemoveAll(work)
	}
	return 0
}
