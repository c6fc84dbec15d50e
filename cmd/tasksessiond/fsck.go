package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

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
	repair := fs.Bool("repair", false, "rebuild what is derived from the log (each row's change columns, every index, the views); refused while a daemon serves the database")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tasksessiond fsck [flags] [SESSION]

Check the database against its log: SQLite's integrity check (every index
against its table), then every row of the log read from the table itself,
each session (or the one given) replayed from its snapshot, and compared with
the replay: each row's change columns and its result (what the model was
told), the tasks view, the log's key, each successor's snapshot against its
parent's replay; the lineage columns against each other; every index and
view the schema defines; all as of one moment. Every problem is reported,
whatever a row holds, past a malformed page too (the rows it cannot read are
named, with their sessions). Exits 1 if anything differs. Safe while the daemon runs.
A missing file is an error, not an empty database. A file at an older schema
is named ("schema 10: start the daemon once to upgrade it") and not checked
further; fsck never upgrades a file.

With --repair (the daemon stopped), make every index again, and every view
missing or altered, and rewrite the change columns that differ from the
replay, in sessions whose log replays consistently only; a session whose log
itself is damaged is named and left as it is. Then check again.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), "\nExamples:\n  tasksessiond fsck\n  tasksessiond fsck --db ./tasks.db my-session --json\n  tasksessiond fsck --repair\n")
	}
	if cli.WantsHelp(args) {
		fs.SetOutput(stdout)
	}
	pos, err := cli.ParseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil || len(pos) > 1 || *repair && len(pos) > 0 {
		fs.Usage()
		return 2
	}
	if pgdb.IsURL(*dbPath) {
		fmt.Fprintf(stderr, "tasksessiond fsck: checks a SQLite database; fleet mode's PostgreSQL is not supported yet (%sFLEET.md): read its tasks view with psql\n", docsURL)
		return 2
	}
	if *repair {
		return repairCmd(ctx, *dbPath, stdout, stderr)
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
		printReport(stdout, r)
	}
	if !r.OK() {
		return 1
	}
	return 0
}

func printReport(w io.Writer, r fsck.Report) {
	if r.Schema != "" {
		fmt.Fprintf(w, "%s\n", r.Schema)
	}
	for _, line := range r.Integrity {
		fmt.Fprintf(w, "integrity: %s\n", line)
	}
	for _, line := range slices.Concat(r.Indexes, r.Views) {
		fmt.Fprintf(w, "schema: %s\n", line)
	}
	for _, line := range r.Unreadable {
		fmt.Fprintf(w, "%s\n", line)
	}
	for _, line := range r.Foreign {
		fmt.Fprintf(w, "schema: %s\n", line)
	}
	for _, line := range r.Strays {
		fmt.Fprintf(w, "stray rows: %s\n", line)
	}
	for _, id := range r.Orphans {
		fmt.Fprintf(w, "the log holds rows of session %s, which does not exist\n", id)
	}
	rows := 0
	for _, s := range r.Sessions {
		rows += s.Rows
		for _, p := range s.Problems {
			fmt.Fprintf(w, "session %s: %s\n", s.ID, p)
		}
	}
	fmt.Fprintf(w, "%d sessions, %d logged calls checked: %d problems\n", len(r.Sessions), rows, r.Problems)
}

// repairCmd opens the database for writing, which a running daemon's lock
// refuses, and rebuilds what is derived from the log.
func repairCmd(ctx context.Context, path string, stdout, stderr io.Writer) int {
	if _, err := os.Stat(path); err != nil {
		fmt.Fprintf(stderr, "tasksessiond fsck: no database to repair at %s: %v\n", path, err)
		return 1
	}
	d, err := db.Open(ctx, path, db.Options{NoUpgrade: true})
	var old *db.OlderSchemaError
	if errors.As(err, &old) {
		fmt.Fprintf(stderr, "tasksessiond fsck: %v; fsck --repair upgrades nothing\n", err)
		return 1
	}
	if errors.Is(err, db.ErrLocked) {
		fmt.Fprintf(stderr, "tasksessiond fsck: %v\nstop the daemon first (tasksessiond status shows it); fsck without --repair is safe beside it\n", err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond fsck: %v\n", err)
		return 1
	}
	defer d.Close()
	before, done, err := fsck.Repair(ctx, d)
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond fsck: repair: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "before: ")
	printReport(stdout, before)
	for _, ix := range done.Indexes {
		fmt.Fprintf(stdout, "repaired: made index %s again from the schema's definition\n", ix)
	}
	for _, v := range done.Views {
		fmt.Fprintf(stdout, "repaired: made view %s again from the schema's definition\n", v)
	}
	if done.NoReindex == "" {
		fmt.Fprintf(stdout, "repaired: rewrote the change columns of %d rows from their replay; rebuilt every index\n", done.Rewrote)
	} else {
		fmt.Fprintf(stdout, "repaired: rewrote the change columns of %d rows from their replay; left the indexes as they are, as rows they index do not check (%s): a rebuild could file a row under a damaged key\n", done.Rewrote, done.NoReindex)
	}
	for _, id := range done.Left {
		fmt.Fprintf(stdout, "left: session %s, whose log itself is damaged (above): repair rebuilds only from a consistent replay and changed nothing of it; the daemon serves what its log replays to (or refuses it, saying why): restore a backup taken before the damage to get it back as it was\n", id)
	}
	after, err := fsck.Check(ctx, d)
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond fsck: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "after: ")
	printReport(stdout, after)
	if !after.OK() {
		fmt.Fprintf(stdout, "what is left is in the log itself (the truth) or in the lineage columns, which repair does not change: set a lineage column back as its problem says, restore a backup, or leave it (the daemon serves what the log replays to, and refuses a session it cannot, saying why)\n")
		return 1
	}
	return 0
}
