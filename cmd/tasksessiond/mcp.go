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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/autostart"
	"github.com/tasksessiond/tasksessiond/internal/binding"
	"github.com/tasksessiond/tasksessiond/internal/hook"
	"github.com/tasksessiond/tasksessiond/internal/mcpbridge"
	"github.com/tasksessiond/tasksessiond/internal/paths"
)

// envSession names the session the MCP bridge serves.
const envSession = "TASKSESSIOND_SESSION"

// envClaudeSession is set by Claude Code for the MCP servers it starts, and
// stays the same across --resume and compaction: bound to it, the list
// follows the Claude Code session.
const envClaudeSession = "CLAUDE_CODE_SESSION_ID"

func mcpCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tasksessiond mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", paths.Socket(), "daemon socket (env "+paths.EnvSocket+")")
	dbPath := fs.String("db", "", "database a daemon started by the bridge serves (default: the daemon's own, env "+paths.EnvDB+")")
	sessionID := fs.String("session", os.Getenv(envSession), "session to serve (env "+envSession+"); default: the Claude Code conversation, else a new one")
	title := fs.String("title", "mcp", "title of a session the bridge creates")
	server := fs.String("server", "tasks", "the bridge's name in the client's configuration (Claude Code: mcp__<server>__TaskCreate), by which a fork's Task calls are found in its transcript")
	create := fs.Bool("create", false, "create the --session on first use when it does not exist yet (for a fixed id in a client's config)")
	noStart := fs.Bool("no-autostart", !autostart.Enabled(), "do not start the daemon when none answers (env "+autostart.Env+"=0)")
	wait := fs.Duration("reconnect-wait", mcpbridge.DefaultReconnectWait, "how long a call waits for an unreachable daemon before it is answered with an error result")
	verbose := fs.Bool("verbose", false, "log what the bridge does on stderr (by default only what is wrong)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tasksessiond mcp [flags]

An MCP server on standard input and output that gives an MCP client (Claude
Code, OpenCode, ...) the four Task tools, forwarding each call to the daemon.

It needs no daemon to start: the tools are listed at once, and the first call
starts "tasksessiond serve" (detached, on the same socket and database) when
no daemon answers, unless --no-autostart or `+autostart.Env+`=0 says not to
(set that when systemd or you run the daemon). If the daemon stops later, the
bridge reconnects by itself; a call that cannot reach it gets an error result
the model can read, never a broken server.

The session: --session, else $`+envSession+`. With neither, the host's
conversation: under Claude Code its id ($`+envClaudeSession+`), followed
through /clear and forks (the SessionStart hook tells the bridge the new id);
under Codex CLI the thread each call's _meta names (threadId); under Gemini
CLI ($GEMINI_CLI=1) the session its SessionStart hook last recorded for the
bridge's parent; each created on first use. Else a new session. A compacted session is followed to its
successor.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), `
Examples:
  claude mcp add --scope user tasks -- tasksessiond mcp
  claude mcp add tasks -- tasksessiond mcp --session my-project --create
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
		Version: version, Logger: log, ReconnectWait: *wait}
	if *verbose {
		cfg.SDKLogger = log
	}
	if *sessionID == "" {
		cfg.FollowMeta = true // Codex names its thread in each call's _meta
		if id := os.Getenv(envClaudeSession); id != "" {
			cfg.SessionID, cfg.Create = id, true
			cfg.Bound = parentBinding(*socket, hook.BindingHost)
		} else if os.Getenv(envGeminiCLI) == "1" {
			cfg.Bound = parentBinding(*socket, hook.BindingHostGemini)
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

// envGeminiCLI is set to 1 by Gemini CLI for the MCP servers it starts.
const envGeminiCLI = "GEMINI_CLI"

// parentBinding follows the host process the bridge serves, its parent,
// through the conversations its SessionStart hook records under host
// (startup, resume, /clear and a fork each name the list's session); nil
// when the bridge has no parent to follow. Claude Code gives its hooks
// its pid as CLAUDE_PID but not its MCP servers, which it starts as its
// direct children, as Gemini CLI does: the parent is the key. A
// CLAUDE_PID the bridge sees was inherited (a Claude Code run inside
// another's shell has the outer one's), so it is not trusted: keyed by it,
// the inner conversation's calls would go to the outer one's list.
func parentBinding(socket, host string) func() binding.Conversation {
	pid := os.Getppid()
	if pid <= 1 {
		return nil
	}
	k := binding.KeyOf(host, pid)
	dir := filepath.Dir(socket)
	return func() binding.Conversation { return binding.Read(dir, k) }
}
