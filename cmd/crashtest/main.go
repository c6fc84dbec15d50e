// Command crashtest is the crash harness, kept out of the shipped binary:
// it runs a tasksessiond daemon, SIGKILLs it under load again and again,
// and checks that nothing acknowledged was lost or doubled.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tasksessiond/tasksessiond/internal/cli"
	"github.com/tasksessiond/tasksessiond/internal/crashtest"
	"github.com/tasksessiond/tasksessiond/internal/pgtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("crashtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cycles := fs.Int("cycles", 20, "kill/restart cycles")
	clients := fs.Int("clients", 16, "concurrent client sessions")
	seed := fs.Uint64("seed", uint64(time.Now().UnixNano()), "random seed (printed, to rerun a failure)")
	maxRun := fs.Duration("max-run", 300*time.Millisecond, "longest run before each kill")
	syncMode := fs.String("sync", "full", "the daemon's --sync")
	dir := fs.String("dir", "", "directory for the database and socket (default: a new temp dir, removed after a clean run)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	binary := fs.String("binary", "", "the tasksessiond binary to test (default: built from this module into the work directory)")
	verbose := fs.Bool("v", false, "print a line per cycle")
	postgres := fs.String("postgres", "", "fleet mode: a postgres:// URL of an empty database, or \"scratch\" for a PostgreSQL started from the installed binaries for this run (durable); two daemons serve it, the one serving the sessions is killed each cycle and the other takes over")
	lease := fs.Duration("lease", time.Second, "fleet mode: the daemons' --lease")
	fault := fs.String("fault", crashtest.FaultKill, "fleet mode: kill (SIGKILL the daemon serving the sessions), pause (SIGSTOP it past its lease, let the other take over and write, then SIGCONT it and check that no read it answers is stale) or mixed (the two in turn)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: go run ./cmd/crashtest [flags]

The crash harness: run a tasksessiond daemon, drive it with concurrent clients
issuing random valid and invalid calls (and compactions), SIGKILL it at a
random moment, restart it, and verify that every acknowledged call is in the
log exactly once, a call in flight at the kill is wholly present or absent
and applies once when retried by callId, every store equals a model of the
acknowledged calls, and fsck (integrity_check included) is clean.
Exits 1 on any fault.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(stderr, "\nExamples:\n  go run ./cmd/crashtest --cycles 20\n  go run ./cmd/crashtest --cycles 1000 --json\n  go run ./cmd/crashtest --binary ./tasksessiond\n  go run ./cmd/crashtest --postgres postgres://localhost/crash --lease 1s   # fleet mode\n  go run ./cmd/crashtest --postgres postgres://localhost/crash --fault pause\n")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	work := *dir
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "tsd-crash"); err != nil {
			fmt.Fprintf(stderr, "crashtest: %v\n", err)
			return 1
		}
	}
	bin := *binary
	if bin == "" {
		bin = filepath.Join(work, "tasksessiond")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/tasksessiond/tasksessiond/cmd/tasksessiond")
		build.Stdout, build.Stderr = stderr, stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(stderr, "crashtest: build tasksessiond (or pass --binary): %v\n", err)
			return 1
		}
	}
	if *postgres == "scratch" {
		srv, err := pgtest.Start(pgtest.Options{Durable: true})
		if err != nil {
			fmt.Fprintf(stderr, "crashtest: %v\n", err)
			return 1
		}
		defer srv.Close()
		if *postgres, err = srv.CreateDB(ctx, "crash"); err != nil {
			fmt.Fprintf(stderr, "crashtest: %v\n", err)
			return 1
		}
	}
	cfg := crashtest.Config{Binary: bin, Dir: work, Cycles: *cycles, Clients: *clients, Seed: *seed, MaxRun: *maxRun, Sync: *syncMode, Postgres: *postgres, Lease: *lease, Fault: *fault}
	if *verbose {
		cfg.Log = stderr
	}
	fmt.Fprintf(stderr, "crashtest: %d cycles, %d clients, seed %d, in %s\n", *cycles, *clients, *seed, work)
	start := time.Now()
	r, err := crashtest.Run(ctx, cfg)
	if *asJSON {
		if perr := cli.PrintJSON(stdout, r); perr != nil {
			fmt.Fprintf(stderr, "crashtest: %v\n", perr)
			return 1
		}
	} else {
		fmt.Fprintf(stdout, "cycles %d, acknowledged %d, in flight at a kill %d (landed %d), retried %d, compactions %d\n",
			r.Cycles, r.Acknowledged, r.InFlight, r.InFlightLanded, r.Retried, r.Compactions)
		if r.Takeovers > 0 {
			fmt.Fprintf(stdout, "takeovers %d, longest from kill to first answer %d ms\n", r.Takeovers, r.TakeoverMaxMs)
		}
		if r.Pauses > 0 {
			fmt.Fprintf(stdout, "pauses %d, reads at the paused daemon %d (refused %d), stale %d\n", r.Pauses, r.PausedReads, r.PausedRefused, r.Stale)
		}
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
