package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/autostart"
	"github.com/tasksessiond/tasksessiond/internal/hook"
	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/paths"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

func hookCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	names := hookHosts()
	fs := flag.NewFlagSet("tasksessiond hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", paths.Socket(), "daemon socket (env "+paths.EnvSocket+")")
	dbPath := fs.String("db", "", "database a daemon started by the hook serves (default: the daemon's own, env "+paths.EnvDB+")")
	session := fs.String("session", "", "the session to act on (default: the hook input's session_id, the conversation the MCP bridge serves)")
	server := fs.String("server", "tasks", "the MCP server's name in the host's configuration: the model knows the tools as mcp__<server>__TaskList")
	maxChars := fs.Int("max-chars", tools.MaxHookChars, "most of context the hook adds, as the host counts it (characters, or bytes where the host keeps 10,000 bytes)")
	noStart := fs.Bool("no-autostart", !autostart.Enabled(), "do not start the daemon when none answers (env "+autostart.Env+"=0)")
	timeout := fs.Duration("timeout", 10*time.Second, "give up (printing nothing) after this long")
	verbose := fs.Bool("verbose", false, "say on stderr why nothing was added, too (by default only what is wrong)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tasksessiond hook `+strings.Join(names, "|")+` [flags] < hook-input.json

A hook command for SessionStart: it keeps the conversation's task list with
the conversation. It reads the hook's JSON on standard input and prints, as
hookSpecificOutput.additionalContext (within --max-chars):
  source "compact":  it compacts the conversation's session and adds the
                     list carried over (the forced TaskList's result)
  source "resume":   the list, unless the conversation already holds it
  source "fork":     a new conversation over a copy of the history: its list
                     is rebuilt by replaying the Task calls of its transcript
  source "startup":  the list of a conversation the daemon already holds
                     (one given by --session, say); a new one starts empty
  source "clear":    nothing (a new conversation starts empty)
It starts the daemon when none answers, as the bridge does. Anything it
cannot do prints nothing for the model, one line on stderr, and exits 0: the
hook never breaks a session.

`+hostsHelp("hook", "%.0s%s\n\n")+`Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), `
Examples:
  tasksessiond setup `+names[0]+`     # writes this hook into the host's settings, with the MCP server
  echo '{"session_id":"S","hook_event_name":"SessionStart","source":"resume"}' | tasksessiond hook `+names[0]+` --verbose
                                     # by hand: the list session S's resume would add, or why none

Each host's hooks, by hand: `+docsURL+`HOSTS.md
`)
	}
	h, ok := hookHost(args)
	if !ok {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fs.SetOutput(stdout)
			fs.Usage()
			return 0
		}
		fmt.Fprintf(stderr, "tasksessiond hook: name the host: %s\n", quoteEach("tasksessiond hook ", names))
		return 2
	}
	if code, ok := parseFlags(fs, args[1:], stdout); !ok {
		return code
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	start := starter(*socket, *dbPath, *noStart)
	cfg := hook.Config{SessionID: *session, Server: *server, MaxChars: *maxChars,
		Dial: func(ctx context.Context) (*client.Client, error) { return autostart.Dial(ctx, start) },
		Warn: func(err error) { fmt.Fprintf(stderr, "tasksessiond hook: %v\n", err) }}
	out := h.Quiet()
	defer func() {
		// A hook must never break its host (exit 2 blocks one).
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "tasksessiond hook: internal error: %v (nothing was added to the session)\n", r)
			out = h.Quiet()
		}
		if out == nil {
			return
		}
		if err := json.NewEncoder(stdout).Encode(out); err != nil {
			fmt.Fprintf(stderr, "tasksessiond hook: write output: %v\n", err)
		}
	}()
	res, err := h.Hook(ctx, cfg, hostEnv(*socket), stdin)
	var bad *hook.InputError
	switch {
	case errors.As(err, &bad):
		fmt.Fprintf(stderr, "tasksessiond hook: %v\n", err)
	case errors.Is(err, hook.ErrNothing):
		if *verbose {
			fmt.Fprintf(stderr, "tasksessiond hook: %v\n", err)
		}
	case err != nil:
		fmt.Fprintf(stderr, "tasksessiond hook: %v (nothing was added to the session)\n", err)
	case res != nil:
		out = res
	}
	return 0
}

// hookHosts names the hosts that have a hook.
func hookHosts() []string {
	var names []string
	for _, h := range host.All() {
		if _, ok := h.(host.Hooker); ok {
			names = append(names, h.Name())
		}
	}
	return names
}

// hookHost is the host args name first, when it has a hook.
func hookHost(args []string) (host.Hooker, bool) {
	if len(args) == 0 {
		return nil, false
	}
	h, ok := host.Lookup(args[0])
	if !ok {
		return nil, false
	}
	hk, ok := h.(host.Hooker)
	return hk, ok
}

// quoteEach is "prefix a", "prefix b" or "prefix c".
func quoteEach(prefix string, names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = `"` + prefix + n + `"`
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
