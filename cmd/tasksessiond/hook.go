package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/autostart"
	"github.com/tasksessiond/tasksessiond/internal/hook"
	"github.com/tasksessiond/tasksessiond/internal/paths"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

// envClaudePID is Claude Code's pid, set for the hooks and MCP servers it
// starts: the key that ties a hook's conversation id to the bridge.
const envClaudePID = "CLAUDE_PID"

func hookCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tasksessiond hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", paths.Socket(), "daemon socket (env "+paths.EnvSocket+")")
	dbPath := fs.String("db", "", "database a daemon started by the hook serves (default: the daemon's own, env "+paths.EnvDB+")")
	session := fs.String("session", "", "the session to act on (default: the hook input's session_id, the conversation the MCP bridge serves)")
	server := fs.String("server", "tasks", "the MCP server's name in Claude Code's configuration: the model knows the tools as mcp__<server>__TaskList")
	maxChars := fs.Int("max-chars", tools.MaxHookChars, "most characters of context the hook adds (Claude Code keeps 10,000 characters; under codex, bytes: Codex keeps 10,000 bytes)")
	noStart := fs.Bool("no-autostart", !autostart.Enabled(), "do not start the daemon when none answers (env "+autostart.Env+"=0)")
	timeout := fs.Duration("timeout", 10*time.Second, "give up (printing nothing) after this long")
	verbose := fs.Bool("verbose", false, "say on stderr why nothing was added, too (by default only what is wrong)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tasksessiond hook claude-code|codex|gemini [flags] < hook-input.json

A Claude Code hook command for SessionStart: it keeps the conversation's task
list with the conversation. It reads the hook's JSON on standard input and
prints, as hookSpecificOutput.additionalContext (within --max-chars):
  source "compact":  it compacts the conversation's session and adds the
                     list carried over (the forced TaskList's result)
  source "resume":   the list, unless the conversation already holds it
  source "fork":     a new conversation over a copy of the history: its list
                     is rebuilt by replaying the Task calls of its transcript
  source "startup":  the list of a conversation the daemon already holds
                     (one given by --session, say); a new one starts empty
  source "clear":    nothing (a new conversation starts empty)
Every source records the conversation's id for the MCP bridge of the same
Claude Code process, which serves that list from then on (this is how /clear
and a fork switch lists). It starts the daemon when none answers, as the
bridge does. Anything it cannot do prints nothing for the model, one line on
stderr, and exits 0: the hook never breaks a session.

"tasksessiond hook codex" does the same for Codex CLI, whose hooks get the
same JSON (session_id is the thread id, which the bridge binds each call to).

"tasksessiond hook gemini" is Gemini CLI's hook, for SessionStart (as above;
the binding is keyed by the Gemini CLI process) and BeforeModel: a request
whose history was compressed gets the list appended to the summary.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), `
Example, in ~/.claude/settings.json (see docs/HOSTS.md, "Claude Code"):
  {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "tasksessiond hook claude-code"}]}]}}
Try it by hand:
  echo '{"session_id":"S","hook_event_name":"SessionStart","source":"resume"}' | tasksessiond hook claude-code
`)
	}
	if len(args) == 0 || (args[0] != "claude-code" && args[0] != "codex" && args[0] != "gemini") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fs.SetOutput(stdout)
			fs.Usage()
			return 0
		}
		fmt.Fprintln(stderr, `tasksessiond hook: name the host: "tasksessiond hook claude-code", "tasksessiond hook codex" or "tasksessiond hook gemini"`)
		return 2
	}
	host := args[0]
	if code, ok := parseFlags(fs, args[1:], stdout); !ok {
		return code
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if host == "gemini" {
		return geminiHook(ctx, hook.Config{SessionID: *session, Server: *server, MaxChars: *maxChars},
			starter(*socket, *dbPath, *noStart), filepath.Dir(*socket), *verbose, stdin, stdout, stderr)
	}
	in, err := hook.ReadInput(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond hook: %v\n", err)
		return 0
	}
	start := starter(*socket, *dbPath, *noStart)
	cfg := hook.Config{SessionID: *session, Server: *server, MaxChars: *maxChars,
		Dial: func(ctx context.Context) (*client.Client, error) { return autostart.Dial(ctx, start) },
		Warn: func(err error) { fmt.Fprintf(stderr, "tasksessiond hook: %v\n", err) }}
	if host == "codex" {
		cfg.Measure = func(s string) int { return len(s) } // Codex counts UTF-8 bytes
	}
	if pid, err := strconv.Atoi(os.Getenv(envClaudePID)); err == nil && pid > 0 && host == "claude-code" {
		cfg.Bind = hook.BindTo(filepath.Dir(*socket), pid)
	}
	defer func() {
		// A hook must never break its host (exit 2 blocks Claude Code).
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "tasksessiond hook: internal error: %v (nothing was added to the session)\n", r)
		}
	}()
	out, err := hook.Run(ctx, cfg, in)
	if errors.Is(err, hook.ErrNothing) {
		if *verbose {
			fmt.Fprintf(stderr, "tasksessiond hook: %v\n", err)
		}
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
