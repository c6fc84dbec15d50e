// Command tasksessiond is a daemon that gives LLM agent hosts a structured,
// session-scoped task list (TaskCreate, TaskList, TaskGet, TaskUpdate) that
// survives host restarts, daemon crashes and context compaction.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/autostart"
	"github.com/tasksessiond/tasksessiond/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name, rest := args[0], args[1:]
	switch name {
	case "serve":
		return serve(ctx, rest, stderr)
	case "fsck":
		return fsckCmd(ctx, rest, stdout, stderr)
	case "mcp":
		return mcpCmd(ctx, rest, stderr)
	case "hook":
		return hookCmd(ctx, rest, os.Stdin, stdout, stderr)
	case "board":
		return boardCmd(ctx, rest, stdout, stderr)
	case "completion":
		return completionCmd(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return 0
	case "version", "--version":
		fmt.Fprintln(stdout, "tasksessiond", version)
		return 0
	}
	if cmd := cli.Lookup(name); cmd != nil {
		dial := func(ctx context.Context, socket string) (*client.Client, error) {
			return autostart.Dial(ctx, starter(socket, "", !autostart.Enabled()))
		}
		return cmd.Run(ctx, &cli.Env{Stdout: stdout, Stderr: stderr, Dial: dial}, rest)
	}
	fmt.Fprintf(stderr, "tasksessiond: unknown command %q\n\n", name)
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `tasksessiond: a session-scoped task list for LLM agent hosts.

Usage: tasksessiond COMMAND [flags] [args]

The daemon:
  serve       run the daemon on a Unix socket (JSON-RPC 2.0, one message per line)
  mcp         an MCP server on stdio that forwards the Task tools to the daemon
  hook        the SessionStart hook of Claude Code or Codex CLI: the list follows the conversation
  fsck        check the database: replay every session and compare (no daemon needed)
  board       serve a live, read-only web page of every session and its tasks (on 127.0.0.1)

Talking to a running daemon:
`)
	for _, c := range cli.Commands {
		fmt.Fprintf(w, "  %-10s  %s\n", c.Name, firstLine(c.Summary))
	}
	fmt.Fprint(w, `
Other:
  completion  print a bash completion script: source <(tasksessiond completion bash)
  version     print the version
  help        print this help

Environment:
  TASKSESSIOND_DB, TASKSESSIOND_SOCKET  the database and socket (see serve --help)
  TASKSESSIOND_AUTOSTART=0              do not start the daemon when none answers
                                        (mcp, hook and the commands above but status
                                        start it by default, detached, on the same
                                        socket and database)

Run "tasksessiond COMMAND --help" for a command's flags and examples.
`)
}

// parseFlags parses a subcommand's flags; when !ok the command ends with
// code (0 after --help, 2 after a bad flag, which flag has reported).
//
// Help that was asked for goes to standard output (it is the answer, and
// "| less" should work); help after a mistake goes to standard error.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if cli.WantsHelp(args) {
		fs.SetOutput(os.Stdout)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	return 0, true
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
