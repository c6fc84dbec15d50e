package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksessiond/tasksessiond/internal/mcpbridge"
	"github.com/tasksessiond/tasksessiond/internal/paths"
)

// envSession names the session the MCP bridge serves.
const envSession = "TASKSESSIOND_SESSION"

// envClaudeSession is set by Claude Code for the MCP servers it starts, and
// stays the same across --resume and compaction: bound to it, the list
// follows the Claude Code session.
const envClaudeSession = "CLAUDE_CODE_SESSION_ID"

func mcpCmd(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("tasksessiond mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", paths.Socket(), "daemon socket (env "+paths.EnvSocket+")")
	sessionID := fs.String("session", os.Getenv(envSession), "session to serve (env "+envSession+"); default: $"+envClaudeSession+" under Claude Code, else a new one, its id printed here")
	title := fs.String("title", "mcp", "title of a session the bridge creates")
	create := fs.Bool("create", false, "create the --session on first use when it does not exist yet (for a fixed id in a client's config)")
	wait := fs.Duration("reconnect-wait", mcpbridge.DefaultReconnectWait, "how long a call waits for an unreachable daemon before it is answered with an error result")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: tasksessiond mcp [flags]

An MCP server on standard input and output that gives an MCP client (Claude
Code, OpenCode, ...) the four Task tools, forwarding each call to the running
daemon. It needs the daemon at start: run "tasksessiond serve" first. If the
daemon restarts later, the bridge reconnects by itself; a call made while it
is down gets an error result the model can read, never a broken server.

The session: --session, else $`+envSession+`, else (under Claude Code)
$`+envClaudeSession+`, created on first use; else a new session. A session
that has been compacted is followed to its successor, for reads and writes.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(stderr, `
Examples:
  claude mcp add --scope user tasks -- tasksessiond mcp
  claude mcp add tasks -- tasksessiond mcp --session my-project --create
  TASKSESSIOND_SESSION=my-session tasksessiond mcp
`)
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *sessionID == "" && os.Getenv(envClaudeSession) != "" {
		*sessionID, *create = os.Getenv(envClaudeSession), true
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	b, err := mcpbridge.New(ctx, mcpbridge.Config{Socket: *socket, SessionID: *sessionID, Title: *title, Create: *create,
		Version: version, Logger: log, ReconnectWait: *wait})
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond mcp: %v\n", err)
		return 1
	}
	switch {
	case b.Created():
		fmt.Fprintf(stderr, "tasksessiond mcp: serving new session %s (pass --session %s to come back to it)\n", b.SessionID(), b.SessionID())
	case b.Pending():
		fmt.Fprintf(stderr, "tasksessiond mcp: serving session %s (new: created on first use)\n", b.SessionID())
	case b.SessionID() != *sessionID:
		fmt.Fprintf(stderr, "tasksessiond mcp: serving session %s (the successor of compacted session %s)\n", b.SessionID(), *sessionID)
	default:
		fmt.Fprintf(stderr, "tasksessiond mcp: serving session %s\n", b.SessionID())
	}
	if err := b.Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "tasksessiond mcp: %v\n", err)
		return 1
	}
	return 0
}
