package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/tasksessiond/tasksessiond/internal/hook"
	"github.com/tasksessiond/tasksessiond/internal/paths"
)

func hookCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tasksessiond hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", paths.Socket(), "daemon socket (env "+paths.EnvSocket+")")
	session := fs.String("session", "", "the session to act on (default: the hook input's session_id, which is what the MCP bridge binds under Claude Code)")
	timeout := fs.Duration("timeout", 10*time.Second, "give up (printing nothing) after this long")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: tasksessiond hook claude-code [flags] < hook-input.json

A Claude Code hook command for SessionStart. It reads the hook's JSON on
standard input and prints, as hookSpecificOutput.additionalContext:
  source "compact":           it compacts the bound session and prints the
                              injected task snapshot and the forced TaskList
  source "resume", "startup": the current task list, when there is one
Anything it cannot do (no daemon, no such session, no tasks) prints nothing
for the model, one line on stderr, and exits 0: the hook never breaks a session.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(stderr, `
Example, in ~/.claude/settings.json (see the README's "Claude Code" section):
  {"hooks": {"SessionStart": [{"matcher": "startup|resume|compact",
    "hooks": [{"type": "command", "command": "tasksessiond hook claude-code"}]}]}}
Try it by hand:
  echo '{"session_id":"S","hook_event_name":"SessionStart","source":"resume"}' | tasksessiond hook claude-code
`)
	}
	if len(args) == 0 || args[0] != "claude-code" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fs.Usage()
			return 0
		}
		fmt.Fprintln(stderr, `tasksessiond hook: name the host: "tasksessiond hook claude-code" (the only one so far)`)
		return 2
	}
	if code, ok := parseFlags(fs, args[1:]); !ok {
		return code
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	in, err := hook.ReadInput(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond hook: %v\n", err)
		return 0
	}
	out, err := hook.Run(ctx, hook.Config{Socket: *socket, SessionID: *session}, in)
	if errors.Is(err, hook.ErrNothing) {
		fmt.Fprintf(stderr, "tasksessiond hook: %v\n", err)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond hook: %v (nothing was added to the session)\n", err)
		return 0
	}
	if err := json.NewEncoder(stdout).Encode(out); err != nil {
		fmt.Fprintf(stderr, "tasksessiond hook: write output: %v\n", err)
	}
	return 0
}
