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
	"slices"
	"syscall"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/autostart"
	"github.com/tasksessiond/tasksessiond/internal/cli"
	_ "github.com/tasksessiond/tasksessiond/internal/host/hosts" // every host registers itself
)

// version and commit are stamped by the release build (cmd/tsdrelease:
// -ldflags "-X main.version=... -X main.commit=..."); versionLine falls
// back on what the Go toolchain recorded.
var version, commit string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWith(ctx, args, &cli.Env{Stdin: os.Stdin, Stdout: stdout, Stderr: stderr})
}

// runWith runs the subcommand args name, with e's standard streams: the
// tests run every command but the daemon's own process this way.
func runWith(ctx context.Context, args []string, e *cli.Env) int {
	if len(args) == 0 {
		usage(e.Stderr)
		return 2
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help":
		name = "help"
	case "--version":
		name = "version"
	}
	cmd := lookup(name)
	if cmd == nil {
		fmt.Fprintf(e.Stderr, "tasksessiond: unknown command %q\n\n", name)
		usage(e.Stderr)
		return 2
	}
	if cmd.Main == nil {
		e.Dial = func(ctx context.Context, socket string) (*client.Client, error) {
			return autostart.Dial(ctx, starter(socket, "", !autostart.Enabled()))
		}
	}
	return cmd.Run(ctx, e, rest)
}

// docsURL is where the documentation is published: help and error texts
// point there, as the npm package and the archives ship no docs/.
const docsURL = "https://github.com/tasksessiond/tasksessiond/blob/main/docs/"

// Help headings, in the order help lists them.
const (
	groupDaemon = "The daemon"
	groupHosts  = "Hosts"
	groupOther  = "Other"
)

// commands is every subcommand, in the order help lists them: run, help,
// completion and the tests all read this one table.
func commands() []*cli.Command {
	own := []*cli.Command{
		{Name: "serve", Group: groupDaemon, Summary: "run the daemon on a Unix socket (JSON-RPC 2.0, one message per line)",
			Main: func(ctx context.Context, e *cli.Env, args []string) int { return serve(ctx, args, e.Stdout, e.Stderr) }},
		{Name: "mcp", Group: groupDaemon, Summary: "an MCP server on stdio that forwards the Task tools to the daemon",
			Main: func(ctx context.Context, e *cli.Env, args []string) int { return mcpCmd(ctx, args, e.Stdout, e.Stderr) }},
		{Name: "hook", Group: groupDaemon, Summary: "an agent host's hook (hook --help names the hosts): the list follows the conversation",
			Main: func(ctx context.Context, e *cli.Env, args []string) int {
				return hookCmd(ctx, args, e.Stdin, e.Stdout, e.Stderr)
			}},
		{Name: "fsck", Group: groupDaemon, Summary: "check the database: replay every session and compare (no daemon needed)",
			Main: func(ctx context.Context, e *cli.Env, args []string) int {
				return fsckCmd(ctx, args, e.Stdout, e.Stderr)
			}},
		{Name: "board", Group: groupDaemon, Summary: "serve a live, read-only web page of every session and its tasks (on 127.0.0.1)",
			Main: func(ctx context.Context, e *cli.Env, args []string) int {
				return boardCmd(ctx, args, e.Stdout, e.Stderr)
			}},
	}
	hosts := []*cli.Command{
		{Name: "setup", Group: groupHosts, Summary: "set a host up in one step: its MCP server, hooks, permissions (setup --help names the hosts)",
			Main: func(_ context.Context, e *cli.Env, args []string) int { return setupCmd(args, e.Stdout, e.Stderr) }},
		{Name: "doctor", Group: groupHosts, Summary: "check every host found here is set up right, and the daemon answers",
			Main: func(ctx context.Context, e *cli.Env, args []string) int {
				return doctorCmd(ctx, args, e.Stdout, e.Stderr)
			}},
	}
	other := []*cli.Command{
		{Name: "completion", Group: groupOther, Summary: "print a bash completion script: source <(tasksessiond completion bash)",
			Main: func(_ context.Context, e *cli.Env, args []string) int { return completionCmd(args, e.Stdout, e.Stderr) }},
		{Name: "version", Group: groupOther, Summary: "print the version",
			Main: func(_ context.Context, e *cli.Env, args []string) int { return versionCmd(args, e.Stdout, e.Stderr) }},
		{Name: "help", Group: groupOther, Summary: "print this help",
			Main: func(_ context.Context, e *cli.Env, _ []string) int {
				usage(e.Stdout)
				return 0
			}},
	}
	return slices.Concat(own, hosts, cli.Commands, other)
}

func lookup(name string) *cli.Command {
	for _, c := range commands() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func usage(w io.Writer) {
	fmt.Fprint(w, `tasksessiond: a session-scoped task list for LLM agent hosts.

Usage: tasksessiond COMMAND [flags] [args]
`)
	group := ""
	for _, c := range commands() {
		if c.Group != group {
			group = c.Group
			fmt.Fprintf(w, "\n%s:\n", group)
		}
		fmt.Fprintf(w, "  %-10s  %s\n", c.Name, firstLine(c.Summary))
	}
	fmt.Fprint(w, `
Environment:
  TASKSESSIOND_DB, TASKSESSIOND_SOCKET  the database and socket (see serve --help)
  TASKSESSIOND_AUTOSTART=0              do not start the daemon when none answers
                                        (mcp, hook and the commands talking to a
                                        running daemon but status start it by default,
                                        detached, on the same socket and database)

Run "tasksessiond COMMAND --help" for a command's flags and examples.
`)
}

// parseFlags parses a subcommand's flags; when !ok the command ends with
// code (0 after --help, 2 after a bad flag, which flag has reported).
//
// Help that was asked for goes to standard output (it is the answer, and
// "| less" should work); help after a mistake goes to standard error.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (code int, ok bool) {
	if cli.WantsHelp(args) {
		fs.SetOutput(stdout)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	return 0, true
}

// parseNamesAndFlags parses args whose hosts' names may stand before the
// flags or after them (setup and doctor).
func parseNamesAndFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (names []string, code int, ok bool) {
	for {
		if code, ok := parseFlags(fs, args, stdout); !ok {
			return nil, code, false
		}
		if fs.NArg() == 0 {
			return names, 0, true
		}
		names, args = append(names, fs.Arg(0)), fs.Args()[1:]
	}
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
