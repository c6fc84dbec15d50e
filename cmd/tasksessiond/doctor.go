package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/autostart"
	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/paths"
)

// The statuses doctor gives a host (doctor --json's "status").
const (
	statusSetUp    = "set up"
	statusNotRight = "not right"
	statusNotFound = "not found"
)

// doctorReport is what doctor found: doctor --json prints it as is
// (docs/OPERATIONS.md holds its shape stable).
type doctorReport struct {
	OK     bool         `json:"ok"`
	Hosts  []hostReport `json:"hosts"`
	Daemon daemonReport `json:"daemon"`
}

type hostReport struct {
	Name     string          `json:"name"`
	Title    string          `json:"title"`
	Status   string          `json:"status"`
	Route    string          `json:"route,omitempty"`
	Problems []doctorProblem `json:"problems"`
}

type doctorProblem struct {
	Problem string `json:"problem"`
	Fix     string `json:"fix"`
}

type daemonReport struct {
	Socket  string `json:"socket"`
	Status  string `json:"status"` // "answers", "not running", "failed"
	Version string `json:"version,omitempty"`
	OK      bool   `json:"ok"`
	Problem string `json:"problem,omitempty"`
	Fix     string `json:"fix,omitempty"`
}

func doctorCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tasksessiond doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o host.Options
	project := optionFlags(fs, &o, doctorHelp)
	asJSON := fs.Bool("json", false, "print the report as one JSON object (its shape: "+docsURL+"OPERATIONS.md#doctor), not as text")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tasksessiond doctor [flags] [HOST...]

Checks, for every host on this machine (or the ones named), that the host
will offer the Task tools and run the hook: set up by "tasksessiond setup",
or by the host's own plugin or extension; nothing stale (an old binary's
path, a hook that misses a source), nothing twice (a setup beside the
plugin), and nothing of the host's own settings turning them off (hooks
disabled, a deny rule, the server excluded or disabled, an untrusted
folder). It reads the files as the host reads them, for the current
directory as the project, and changes nothing. Then it checks that the
daemon answers.

Each problem comes with its fix. It exits 1 when something is wrong, else
0; a host that is not on this machine is listed, never wrong. Give it the
flags you gave setup (--bin, --socket, --db, --session, --project), so
that it expects what setup wrote.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprintf(fs.Output(), `
Examples:
  tasksessiond doctor
  tasksessiond doctor %s --socket /run/tasksessiond/s.sock
  tasksessiond doctor --json | jq -r '.hosts[] | "\(.name): \(.status)"'
`, host.Names()[0])
	}
	names, code, ok := parseNamesAndFlags(fs, args, stdout)
	if !ok {
		return code
	}
	if err := resolve(&o, *project); err != nil {
		fmt.Fprintf(stderr, "tasksessiond doctor: %v\n", err)
		return 1
	}
	hosts := host.All()
	if len(names) > 0 {
		hosts = nil
		for _, n := range names {
			h, ok := host.Lookup(n)
			if !ok {
				fmt.Fprintf(stderr, "tasksessiond doctor: unknown host %q (one of: %s)\n", n, strings.Join(host.Names(), ", "))
				return 2
			}
			hosts = append(hosts, h)
		}
	}
	rep := doctorReport{Daemon: checkDaemon(ctx, o)}
	rep.OK = rep.Daemon.OK
	for _, h := range hosts {
		r := checkHost(h, o, len(names) > 0)
		rep.OK = rep.OK && r.Status != statusNotRight
		rep.Hosts = append(rep.Hosts, r)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "tasksessiond doctor: %v\n", err)
			return 1
		}
	} else {
		printDoctor(stdout, rep)
	}
	if !rep.OK {
		return 1
	}
	return 0
}

// doctorHelp is what the flags doctor shares with setup mean to doctor:
// what setup was given, so what to expect.
var doctorHelp = [6]string{
	`the tasksessiond command setup was given (default: "tasksessiond" when that is this binary on PATH, else this binary's path); a setup that runs another is reported as stale`,
	"the daemon socket setup was given, and the one whose daemon is checked (default: the one serve uses)",
	"the database setup was given",
	"the session setup was given",
	"check the current directory's project files, as setup --project wrote them, not the user's",
	"setup was given --no-hook: expect no hooks, and no report of hooks turned off",
}

// checkHost is h's report. A host not named and not on this machine is
// "not found", whatever its files say.
func checkHost(h host.Host, o host.Options, named bool) hostReport {
	r := hostReport{Name: h.Name(), Title: h.Title(), Problems: []doctorProblem{}}
	d := h.Diagnose(o)
	if !named && !d.Installed {
		r.Status = statusNotFound
		return r
	}
	var found []host.Finding
	if d.Route != "" {
		r.Route = d.Route
		found = append(found, d.Duplicates...)
	} else {
		found = diagnose(h, o)
	}
	found = append(found, d.Blocked...)
	for _, fd := range found {
		// setup's plan and its check may both name a file it cannot
		// read: the first, whose fix has doctor's flags, is kept
		if !slices.ContainsFunc(r.Problems, func(p doctorProblem) bool { return p.Problem == fd.Problem }) {
			r.Problems = append(r.Problems, doctorProblem{Problem: fd.Problem, Fix: fd.Fix})
		}
	}
	r.Status = statusSetUp
	if len(r.Problems) > 0 {
		r.Status = statusNotRight
	}
	return r
}

func printDoctor(w io.Writer, rep doctorReport) {
	for _, r := range rep.Hosts {
		switch {
		case r.Status == statusNotFound:
			fmt.Fprintf(w, "%s: not found on this machine\n", r.Title)
		case r.Status == statusSetUp && r.Route != "":
			fmt.Fprintf(w, "%s: set up (by %s)\n", r.Title, r.Route)
		case r.Status == statusSetUp:
			fmt.Fprintf(w, "%s: set up\n", r.Title)
		case r.Route != "":
			fmt.Fprintf(w, "%s: NOT RIGHT (set up by %s)\n", r.Title, r.Route)
		default:
			fmt.Fprintf(w, "%s: NOT RIGHT\n", r.Title)
		}
		var fixes []string // none but where not right
		for _, p := range r.Problems {
			fmt.Fprintf(w, "  - %s\n", p.Problem)
			if !slices.Contains(fixes, p.Fix) {
				fixes = append(fixes, p.Fix)
			}
		}
		for _, fix := range fixes {
			fmt.Fprintf(w, "  fix: %s\n", fix)
		}
	}
	switch d := rep.Daemon; {
	case d.Status == "answers":
		fmt.Fprintf(w, "daemon: answers on %s (version %s)\n", d.Socket, d.Version)
	case d.OK:
		fmt.Fprintf(w, "daemon: not running on %s; the first call or hook starts it\n", d.Socket)
	case d.Fix != "":
		fmt.Fprintf(w, "daemon: %s\n  fix: %s\n", d.Problem, d.Fix)
	default:
		fmt.Fprintf(w, "daemon: %s\n", d.Problem)
	}
}

// diagnose is what is wrong with h's setup by "tasksessiond setup", each
// with the command that fixes it.
func diagnose(h host.Host, o host.Options) []host.Finding {
	var out []host.Finding
	again := setupCommand(h, o)
	if _, err := exec.LookPath(o.Bin); err != nil {
		out = append(out, host.Finding{Problem: fmt.Sprintf("%s is not there to run (%v)", o.Bin, err), Fix: again})
	}
	plan, err := h.Plan(o)
	switch {
	case errors.Is(err, host.ErrRecord):
		out = append(out, host.Finding{Problem: err.Error(), Fix: host.Command("mv", o.RecordFile(), o.RecordFile()+".unread") + ", then: " + again})
	case err != nil:
		out = append(out, host.Finding{Problem: err.Error(), Fix: "repair the file, then: " + again})
	case plan.Changed():
		for _, s := range plan.Steps {
			out = append(out, host.Finding{Problem: "setup would " + s, Fix: again})
		}
	}
	return append(out, h.Check(o)...)
}

// setupCommand is the setup command line with the options doctor was
// given (--bin when not the default).
func setupCommand(h host.Host, o host.Options) string {
	words := []string{"tasksessiond", "setup", h.Name()}
	bin := o.Bin
	if bin == defaultBin() {
		bin = ""
	}
	for _, fl := range []struct{ name, v string }{{"--bin", bin}, {"--socket", o.Socket}, {"--db", o.DB}, {"--session", o.Session}} {
		if fl.v != "" {
			words = append(words, fl.name, fl.v)
		}
	}
	if o.Project != "" {
		words = append(words, "--project")
	}
	if o.NoHook {
		words = append(words, "--no-hook")
	}
	return host.Command(words...)
}

// checkDaemon says whether the daemon answers on the socket; a daemon
// that is not running is right when the hosts start it on first use.
func checkDaemon(ctx context.Context, o host.Options) daemonReport {
	socket := o.Socket
	if socket == "" {
		socket = paths.Socket()
	}
	r := daemonReport{Socket: socket}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, socket)
	if err == nil {
		defer c.Close()
		st, err := c.Status(ctx)
		if err == nil {
			r.Status, r.Version, r.OK = "answers", st.Version, true
			return r
		}
		r.Status, r.Problem = "failed", fmt.Sprintf("on %s, but status failed: %v", socket, err)
		return r
	}
	r.Status = "not running"
	if autostart.Enabled() {
		r.OK = true
		return r
	}
	r.Problem = fmt.Sprintf("not running on %s, and %s=0 keeps the hosts from starting it", socket, autostart.Env)
	r.Fix = "tasksessiond serve (or systemctl --user start tasksessiond)"
	return r
}
