package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/autostart"
	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/paths"
)

func doctorCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tasksessiond doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f setupFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tasksessiond doctor [flags] [HOST...]

For every host found on this machine (or the ones named): whether it is set
up, and what is missing or stale (an old binary's path, a hook that misses
a source, a server under another name); then whether the daemon answers.
It exits 1 when something is wrong, saying the command that puts it right.
Give it the flags you gave setup (--bin, --socket, --db, --session,
--project), so that it expects what setup wrote.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprintf(fs.Output(), `
Examples:
  tasksessiond doctor
  tasksessiond doctor %s --socket /run/tasksessiond/s.sock
`, host.Names()[0])
	}
	// flags may come after the hosts' names too, as setup takes them
	var names []string
	for {
		if code, ok := parseFlags(fs, args, stdout); !ok {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		names, args = append(names, fs.Arg(0)), fs.Args()[1:]
	}
	o, err := f.options()
	if err != nil {
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
	wrong := false
	for _, h := range hosts {
		if len(names) == 0 && !h.Found(o) {
			fmt.Fprintf(stdout, "%s: not found on this machine\n", h.Title())
			continue
		}
		problems, fixes := diagnose(h, o, f)
		if len(problems) == 0 {
			fmt.Fprintf(stdout, "%s: set up\n", h.Title())
			continue
		}
		wrong = true
		fmt.Fprintf(stdout, "%s: NOT RIGHT\n", h.Title())
		for _, p := range problems {
			fmt.Fprintf(stdout, "  - %s\n", p)
		}
		for _, fix := range fixes {
			fmt.Fprintf(stdout, "  fix: %s\n", fix)
		}
	}
	if !daemonAnswers(ctx, o, stdout) {
		wrong = true
	}
	if wrong {
		return 1
	}
	return 0
}

// diagnose is what is wrong with h's setup, and the commands that fix it.
func diagnose(h host.Host, o host.Options, f setupFlags) (problems, fixes []string) {
	again := setupCommand(h, f)
	if _, err := exec.LookPath(o.Bin); err != nil {
		problems = append(problems, fmt.Sprintf("%s is not there to run (%v)", o.Bin, err))
	}
	plan, err := h.Plan(o)
	switch {
	case errors.Is(err, host.ErrRecord):
		problems = append(problems, err.Error())
		fixes = append(fixes, host.Command("mv", o.RecordFile(), o.RecordFile()+".unread")+", then: "+again)
	case err != nil:
		problems = append(problems, err.Error())
		fixes = append(fixes, "repair the file, then: "+again)
	case plan.Changed():
		for _, s := range plan.Steps {
			problems = append(problems, "setup would "+s)
		}
		fixes = append(fixes, again)
	}
	for _, fd := range h.Check(o) {
		problems = append(problems, fd.Problem)
		fixes = append(fixes, fd.Fix)
	}
	return problems, fixes
}

// setupCommand is the setup command line with the flags doctor was given.
func setupCommand(h host.Host, f setupFlags) string {
	words := []string{"tasksessiond", "setup", h.Name()}
	for _, fl := range []struct{ name, v string }{{"--bin", f.bin}, {"--socket", f.socket}, {"--db", f.db}, {"--session", f.session}} {
		if fl.v != "" {
			words = append(words, fl.name, fl.v)
		}
	}
	if f.project {
		words = append(words, "--project")
	}
	if f.noHook {
		words = append(words, "--no-hook")
	}
	return host.Command(words...)
}

// daemonAnswers says whether the daemon answers on the socket; a daemon
// that is not running is right when the hosts start it on first use.
func daemonAnswers(ctx context.Context, o host.Options, w io.Writer) bool {
	socket := o.Socket
	if socket == "" {
		socket = paths.Socket()
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, socket)
	if err == nil {
		defer c.Close()
		st, err := c.Status(ctx)
		if err == nil {
			fmt.Fprintf(w, "daemon: answers on %s (version %s)\n", socket, st.Version)
			return true
		}
		fmt.Fprintf(w, "daemon: on %s, but status failed: %v\n", socket, err)
		return false
	}
	if autostart.Enabled() {
		fmt.Fprintf(w, "daemon: not running on %s; the first call or hook starts it\n", socket)
		return true
	}
	fmt.Fprintf(w, "daemon: not running on %s, and %s=0 keeps the hosts from starting it\n  fix: tasksessiond serve (or systemctl --user start tasksessiond)\n", socket, autostart.Env)
	return false
}
