package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/autostart"
	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/mcpbridge"
	"github.com/tasksessiond/tasksessiond/internal/paths"
)

// envSession names the session the MCP bridge serves.
const envSession = "TASKSESSIOND_SESSION"

func mcpCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tasksessiond mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", paths.Socket(), "daemon socket (env "+paths.EnvSocket+")")
	dbPath := fs.String("db", "", "database a daemon started by the bridge serves (default: the daemon's own, env "+paths.EnvDB+")")
	sessionID := fs.String("session", os.Getenv(envSession), "session to serve (env "+envSession+"); default: the host's conversation, else a new one")
	title := fs.String("title", "mcp", "title of a session the bridge creates")
	server := fs.String("server", "tasks", "the bridge's name in the client's configuration (the model's mcp__<server>__TaskCreate), by which a fork's Task calls are found in its transcript")
	create := fs.Bool("create", false, "create the --session on first use when it does not exist yet (for a fixed id in a client's config)")
	noStart := fs.Bool("no-autostart", !autostart.Enabled(), "do not start the daemon when none answers (env "+autostart.Env+"=0)")
	wait := fs.Duration("reconnect-wait", mcpbridge.DefaultReconnectWait, "how long a call waits for an unreachable daemon before it is answered with an error result")
	verbose := fs.Bool("verbose", false, "log what the bridge does on stderr (by default only what is wrong)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tasksessiond mcp [flags]

An MCP server on standard input and output that gives an MCP client (an
agent host) the four Task tools, forwarding each call to the daemon.

It needs no daemon to start: the tools are listed at once, and the first call
starts "tasksessiond serve" (detached, on the same socket and database) when
no daemon answers, unless --no-autostart or `+autostart.Env+`=0 says not to
(set that when systemd or you run the daemon). If the daemon stops later, the
bridge reconnects by itself; a call that cannot reach it gets an error result
the model can read, never a broken server.

The session: --session, else $`+envSession+`. With neither, the host's
conversation, created on first use:
`+hostsHelp("mcp", "  %s: %s\n")+`Else a new session. A compacted session is followed to its successor.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), `
Examples:
  tasksessiond mcp
  tasksessiond mcp --session my-project --create
  TASKSESSIOND_SESSION=my-session tasksessiond mcp
`)
	}
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	cfg := mcpbridge.Config{Socket: *socket, SessionID: *sessionID, Title: *title, Create: *create, Server: *server,
		Version: daemonVersion(), Logger: log, ReconnectWait: *wait}
	if *verbose {
		cfg.SDKLogger = log
	}
	cfg.Clients = host.Clients()
	if *sessionID == "" {
		cfg.FollowMeta = true // a host may name its conversation in each call's _meta
		if s, ok := host.Started(hostEnv(*socket)); ok {
			if s.SessionID != "" {
				cfg.SessionID, cfg.Create = s.SessionID, true
			}
			cfg.Bound, cfg.History, cfg.Transcript = s.Bound, s.History, s.Transcript
		}
	}
	start := starter(*socket, *dbPath, *noStart)
	cfg.Dial = func(ctx context.Context) (*client.Client, error) { return autostart.Dial(ctx, start) }
	b, err := mcpbridge.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond mcp: %v\n", err)
		return 1
	}
	if err := b.Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "tasksessiond mcp: %v\n", err)
		return 1
	}
	return 0
}

// starter is how a command that needs the daemon starts one: this very
// binary, on the same socket and database; off when told so.
func starter(socket, db string, off bool) autostart.Config {
	cfg := autostart.Config{Socket: socket, DB: db}
	if off {
		return cfg
	}
	if exe, err := os.Executable(); err == nil {
		cfg.Exe = exe
	}
	return cfg
}

// hostEnv is what this process sees of the host that started it.
func hostEnv(socket string) host.Env {
	return host.Env{Getenv: os.Getenv, Parent: hostParent(os.Getppid(), os.Getenv("TASKSESSIOND_LAUNCHER")), RuntimeDir: filepath.Dir(socket)}
}

// hostParent is the pid of the process that started this one: ppid,
// unless ppid is the npm package's Node launcher (which says so in
// TASKSESSIOND_LAUNCHER, "<its pid> <its parent's pid>", where it could
// not exec the binary), whose parent is then the host. A value inherited
// from further up names another pid and is ignored.
func hostParent(ppid int, launcher string) int {
	var pid, parent int
	if _, err := fmt.Sscanf(launcher, "%d %d", &pid, &parent); err == nil && pid == ppid && parent > 1 {
		return parent
	}
	return ppid
}

// hostsHelp is what each host that says so does under command, one line
// each in format (its title, then the text).
func hostsHelp(command, format string) string {
	var b strings.Builder
	for _, h := range host.All() {
		if d, ok := h.(host.Helper); ok {
			if s := d.Help(command); s != "" {
				fmt.Fprintf(&b, format, h.Title(), s)
			}
		}
	}
	return b.String()
}
