package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tasksessiond/tasksessiond/internal/cli"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/fsck"
	"github.com/tasksessiond/tasksessiond/internal/paths"
	"github.com/tasksessiond/tasksessiond/internal/pgdb"
)

func fsckCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tasksessiond fsck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbPath := fs.String("db", paths.DB(), "database file (env "+paths.EnvDB+")")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tasksessiond fsck [flags] [SESSION]

Check the database: SQLite's integrity check, then for every session (or the
one given) replay its log, compare each applied write with the task its
recorded result holds, and the final tasks with the tasks projection, all as
of one moment (a read transaction per session). Exits 1 if anything diverges.
Safe while the daemon runs. A missing file is an error, not an empty database.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), "\nExamples:\n  tasksessiond fsck\n  tasksessiond fsck --db ./tasks.db my-session --json\n")
	}
	if cli.WantsHelp(args) {
		fs.SetOutput(stdout)
	}
	pos, err := cli.ParseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil || len(pos) > 1 {
		fs.Usage()
		return 2
	}
	if pgdb.IsURL(*dbPath) {
		fmt.Fprintf(stderr, "tasksessiond fsck: checks a SQLite database; fleet mode's PostgreSQL is not supported yet (docs/FLEET.md): read its tasks view with psql\n")
		return 2
	}
	// Read-only: a mistyped path is an error, not a new empty database.
	d, err := db.OpenReadOnly(ctx, *dbPath)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stderr, "tasksessiond fsck: no database to check at %s: %v\n", *dbPath, err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond fsck: %v\n", err)
		return 1
	}
	defer d.Close()
	r, err := fsck.Check(ctx, d, pos...)
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond fsck: %v\n", err)
		return 1
	}
	if *asJSON {
		if err := cli.PrintJSON(stdout, r); err != nil {
			fmt.Fprintf(stderr, "tasksessiond fsck: %v\n", err)
			return 1
		}
	} else {
		for _, line := range r.Integrity {
			fmt.Fprintf(stdout, "integrity: %s\n", line)
		}
		rows := 0
		for _, s := range r.Sessions {
			rows += s.Rows
			for _, p := range s.Problems {
				fmt.Fprintf(stdout, "session %s: %s\n", s.ID, p)
			}
		}
		fmt.Fprintf(stdout, "%d sessions, %d logged calls checked: %d problems\n", len(r.Sessions), rows, r.Problems)
	}
	if !r.OK() {
		return 1
	}
	return 0
}
