package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/config"
	_ "github.com/tasksessiond/tasksessiond/internal/host/hosts" // every host registers itself
	"github.com/tasksessiond/tasksessiond/internal/paths"
)

// optionFlags registers on fs the flags setup and doctor share, each
// setting its member of o (--project: project), with help, their usage
// in the order bin, socket, db, session, project, no-hook.
func optionFlags(fs *flag.FlagSet, o *host.Options, help [6]string) (project *bool) {
	fs.StringVar(&o.Bin, "bin", "", help[0])
	fs.StringVar(&o.Socket, "socket", "", help[1])
	fs.StringVar(&o.DB, "db", "", help[2])
	fs.StringVar(&o.Session, "session", "", help[3])
	project = fs.Bool("project", false, help[4])
	fs.BoolVar(&o.NoHook, "no-hook", false, help[5])
	return project
}

var setupHelp = [6]string{
	`the tasksessiond command the host runs (default: "tasksessiond" when that is this binary on PATH, else this binary's path)`,
	"a daemon socket other than the default, given to the MCP server and the hooks (env " + paths.EnvSocket + " where they run works too)",
	"a database other than the default for a daemon they start",
	"bind every conversation to this one daemon session (created on first use): one list across conversations and hosts",
	"set up the current directory's project files (where the host has them), not the user's, save what a host reads from the user's files only (" + docsURL + "HOSTS.md)",
	"set up the MCP server (or plugin) only, without the hooks",
}

// resolve completes the options the flags set: the default binary, paths
// made absolute (the host runs them from anywhere), the current directory
// as the project.
func resolve(o *host.Options, project bool) (err error) {
	if o.Bin == "" {
		o.Bin = defaultBin()
	}
	if project {
		o.Project, err = os.Getwd()
	}
	for _, p := range []*string{&o.Bin, &o.Socket, &o.DB} {
		if err == nil && *p != "" && (p != &o.Bin || strings.ContainsRune(*p, filepath.Separator)) {
			*p, err = filepath.Abs(*p)
		}
	}
	return err
}

// defaultBin is "tasksessiond" when that, on PATH, is this binary, else
// this binary's absolute path.
func defaultBin() string {
	exe, err := os.Executable()
	if err != nil {
		return "tasksessiond"
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	if p, err := exec.LookPath("tasksessiond"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && real == exe {
			return "tasksessiond"
		}
	}
	return exe
}

func setupCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tasksessiond setup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o host.Options
	project := optionFlags(fs, &o, setupHelp)
	dryRun := fs.Bool("dry-run", false, "print the steps setup would take and the change as a diff, and change nothing")
	fs.BoolVar(&o.Uninstall, "uninstall", false, "remove what setup added, and nothing else")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: tasksessiond setup HOST [flags]

Sets HOST up in one step: the MCP server "tasks" (or the host's plugin),
the hooks that keep the list with the conversation, the permission that
spares a prompt per call, and the host's own to-do tool off where the host
lets it. HOST is one of: %s.

Each file is edited in place, keeping its comments, order and layout, then
read back as the host reads it; the original is kept beside it (suffix
%s) until --uninstall gives it back. A file that is a link is
written where it points. A file setup cannot read is refused, untouched. Running
it again changes nothing; --uninstall takes back exactly what it added.
Each host's own variables for where its configuration lives are honoured.
What it writes, host by host: `+docsURL+`HOSTS.md

Flags:
`, strings.Join(host.Names(), ", "), config.BackupSuffix)
		fs.PrintDefaults()
		fmt.Fprintf(fs.Output(), "\nExamples:\n  tasksessiond setup %[1]s --dry-run\n  tasksessiond setup %[1]s\n  tasksessiond setup %[1]s --uninstall\n", host.Names()[0])
	}
	names, code, ok := parseNamesAndFlags(fs, args, stdout)
	if !ok {
		return code
	}
	if len(names) != 1 {
		fmt.Fprintf(stderr, "%s: name one host: %s\n", fs.Name(), strings.Join(host.Names(), ", "))
		return 2
	}
	h, found := host.Lookup(names[0])
	if !found {
		fmt.Fprintf(stderr, "%s: unknown host %q (one of: %s)\n", fs.Name(), names[0], strings.Join(host.Names(), ", "))
		return 2
	}
	err := resolve(&o, *project)
	var plan *host.Plan
	if err == nil {
		plan, err = h.Plan(o)
	}
	if err == nil {
		err = host.BesideRoute(h, o) // the plugin or extension sets h up already
	}
	if err == nil && *dryRun && plan.Changed() {
		// first what the real run would print, then the bytes
		fmt.Fprintf(stdout, "%s: setup would\n", h.Title())
		printList(stdout, "  - ", plan.Steps)
		printList(stdout, "  note: ", plan.Notes)
		for _, c := range plan.Changes {
			config.Diff(stdout, c)
		}
		fmt.Fprintf(stdout, "(dry run: nothing was changed)\n")
		return 0
	}
	if err == nil && !*dryRun {
		err = plan.Apply() // setup's record may change though no file does
	}
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond setup: %v\n", err)
		return 1
	}
	switch {
	case plan.Changed() && o.Uninstall:
		fmt.Fprintf(stdout, "%s: setup removed\n", h.Title())
	case plan.Changed():
		fmt.Fprintf(stdout, "%s: set up\n", h.Title())
	case o.Uninstall:
		fmt.Fprintf(stdout, "%s: nothing of setup's to remove; nothing changed\n", h.Title())
	default:
		fmt.Fprintf(stdout, "%s: set up already; nothing changed\n", h.Title())
	}
	if plan.Changed() {
		printList(stdout, "  - ", plan.Steps)
	}
	printList(stdout, "  note: ", plan.Notes)
	return 0
}

func printList(w io.Writer, prefix string, lines []string) {
	for _, l := range lines {
		fmt.Fprintf(w, "%s%s\n", prefix, l)
	}
}
