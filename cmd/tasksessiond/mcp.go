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

func mcpCmd(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("tasksessiond mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", paths.Socket(), "daemon socket (env "+paths.EnvSocket+")")
	sessionID := fs.String("session", os.Getenv(envSession), "session to serve (env "+envSession+"); default: a new one, its id printed here")
	title := fs.String("title", "mcp", "title of a session the bridge creates")
	create := fs.Bool("create", false, "create the --session when it does not exist yet (for a fixed id in a client's config)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: tasksessiond mcp [flags]

An MCP server on standard input and output that gives an MCP client (Claude
Code, OpenCode, ...) the four Task tools, forwarding each call to the running
daemon. It needs the daemon: start it first with "tasksessiond serve".

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(stderr, `
Examples:
  claude mcp add tasks -- tasksessiond mcp --session my-project --create
  TASKSESSIOND_SESSION=my-session tasksessiond mcp
`)
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	b, err := mcpbridge.New(ctx, mcpbridge.Config{Socket: *socket, SessionID: *sessionID, Title: *title, Create: *create, Version: version, Logger: log})
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond mcp: %v\n", err)
		return 1
	}
	if b.Created() {
		fmt.Fprintf(stderr, "tasksessiond mcp: serving new session %s (pass --session %s to come back to it)\n", b.SessionID(), b.SessionID())
	} else {
		fmt.Fprintf(stderr, "tasksessiond mcp: serving session %s\n", b.SessionID())
	}
	if err := b.Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "tasksessiond mcp: %v\n", err)
		return 1
	}
	return 0
}
