// Package gemini drives the real Gemini CLI ("gemini -p") against a
// scripted Gemini API (e2e/modelapi, GOOGLE_GEMINI_BASE_URL, a dummy API
// key) and a tasksessiond daemon: the MCP server "tasks" running
// "tasksessiond mcp", and the hooks "tasksessiond hook gemini" in
// ~/.gemini/settings.json. Each Host has its own HOME, so tests run in
// parallel and never read the user's configuration.
package gemini

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// Version is the Gemini CLI release these tests pin; e2e/install-hosts.sh
// installs it.
const Version = "0.61.0"

// EnvBinary overrides where the gemini binary is looked for.
const EnvBinary = "TASKSESSIOND_E2E_GEMINI"

// Binary returns the gemini binary, skipping the test (or failing it under
// TASKSESSIOND_E2E=1) when it is not installed.
func Binary(tb testing.TB) string {
	tb.Helper()
	return harness.RequireHost(tb, harness.Host{
		Name:    "Gemini CLI " + Version,
		Install: "gemini",
		Env:     EnvBinary,
		Path:    filepath.Join(harness.CacheDir(), "gemini-"+Version, "node_modules", ".bin", "gemini"),
	})
}

// Model is the model the CLI is told to use (a real name: the CLI knows
// its context window, 1,048,576 tokens).
const Model = "gemini-2.5-pro"

// Server is the MCP server's name in settings.json; Gemini CLI offers its
// tools as mcp_tasks_TaskCreate and so on.
const Server = "tasks"

// Tool names as the model sees them.
const (
	TaskCreate = "mcp_" + Server + "_TaskCreate"
	TaskList   = "mcp_" + Server + "_TaskList"
	TaskGet    = "mcp_" + Server + "_TaskGet"
	TaskUpdate = "mcp_" + Server + "_TaskUpdate"
)

// Options configure a Host.
type Options struct {
	// Respond scripts the model (see modelapi.Script, modelapi.Steps).
	Respond modelapi.Responder
	// Daemon is a daemon to share; by default the Host makes its own.
	Daemon *harness.Daemon
	// NoDaemon leaves the daemon down.
	NoDaemon bool
	// NoHook leaves out the hooks.
	NoHook bool
	// MCPArgs are added to the bridge's arguments (after --socket).
	MCPArgs []string
	// HookArgs are added to the hook's arguments, e.g. --session NAME.
	HookArgs []string
	// Settings are merged into settings.json at the top level.
	Settings map[string]any
	// Noisy allows the bridge and the hook to write to stderr.
	Noisy bool
}

// Host is one isolated Gemini CLI installation.
type Host struct {
	Gemini  string // the gemini binary
	TSD     string // the tasksessiond binary
	API     *modelapi.Server
	Daemon  *harness.Daemon
	Home    string // HOME: .gemini/settings.json, .gemini/tmp/<project>/chats (the sessions)
	Project string // the working directory of every run
	Root    string
	// ExtraEnv is added to every run's environment.
	ExtraEnv []string

	hookDir string
	mcpLog  string
	mcpErr  string
	runsMu  sync.Mutex // runs may run at once
	runs    []string

	tb testing.TB
}

// New sets up a Host and starts its daemon (unless opts.NoDaemon or
// opts.Daemon).
func New(tb testing.TB, opts Options) *Host {
	tb.Helper()
	h := &Host{Gemini: Binary(tb), TSD: harness.Binary(tb), tb: tb}
	h.API = modelapi.New(tb, modelapi.Config{Respond: opts.Respond, Classify: Classify, Default: DefaultReply})
	if opts.Daemon != nil {
		h.Daemon = opts.Daemon
	} else {
		h.Daemon = harness.NewDaemon(tb)
		if !opts.NoDaemon {
			h.Daemon.Start(tb)
		}
	}
	root := tb.TempDir()
	h.Root = root
	h.hookDir = filepath.Join(root, "hooks")
	h.mcpLog = filepath.Join(root, "mcp.log")
	h.mcpErr = filepath.Join(root, "mcp.stderr")
	h.Home = filepath.Join(root, "home")
	h.Project = filepath.Join(root, "project")
	for _, d := range []string{filepath.Join(h.Home, ".gemini"), h.Project, h.hookDir, filepath.Join(root, "bin")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	h.writeWrappers(opts.HookArgs)
	h.writeSettings(opts)
	tb.Cleanup(func() {
		if !tb.Failed() && !opts.Noisy {
			h.checkQuiet(tb)
		}
		if !tb.Failed() {
			return
		}
		h.runsMu.Lock()
		tb.Logf("gemini runs:\n%s", strings.Join(h.runs, "\n"))
		h.runsMu.Unlock()
		tb.Logf("hook runs:\n%s", h.dumpHooks())
		tb.Logf("model requests:\n%s", h.API.Dump())
	})
	return h
}

// HookEvents are the events the harness registers the hook for, as the
// README's fragment does.
var HookEvents = []string{"SessionStart", "BeforeModel"}

// writeSettings writes ~/.gemini/settings.json: API-key auth, the MCP
// server (trusted: its calls need no confirmation), the hooks, nothing
// that phones home.
func (h *Host) writeSettings(opts Options) {
	type obj = map[string]any
	args := append([]string{"--socket", h.Daemon.Socket}, opts.MCPArgs...)
	s := obj{
		"security":  obj{"auth": obj{"selectedType": "gemini-api-key"}, "folderTrust": obj{"enabled": false}},
		"general":   obj{"disableAutoUpdate": true, "disableUpdateNag": true, "enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"privacy":   obj{"usageStatisticsEnabled": false},
		"telemetry": obj{"enabled": false},
		"model":     obj{"name": Model},
		"mcpServers": obj{Server: obj{
			"command": h.mcpCommand(),
			"args":    args,
			"env":     obj{"TASKSESSIOND_SOCKET": h.Daemon.Socket, "TASKSESSIOND_DB": h.Daemon.DB},
			"trust":   true,
			"timeout": 60000,
		}},
	}
	if !opts.NoHook {
		hooks := obj{}
		for _, ev := range HookEvents {
			hooks[ev] = []any{obj{"hooks": []any{obj{"type": "command", "command": h.hookCommand(), "name": "tasksessiond"}}}}
		}
		s["hooks"] = hooks
	}
	for k, v := range opts.Settings {
		s[k] = v
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		h.tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.Home, ".gemini", "settings.json"), data, 0o600); err != nil {
		h.tb.Fatal(err)
	}
}

// Env is the environment of every run: only what the harness sets (and
// PATH).
func (h *Host) Env() []string {
	return append([]string{
		"HOME=" + h.Home,
		"PATH=" + os.Getenv("PATH"),
		"TERM=dumb",
		"LANG=C.UTF-8",
		"TMPDIR=" + os.TempDir(),
		"GEMINI_API_KEY=e2e-dummy-key",
		"GOOGLE_GEMINI_BASE_URL=" + h.API.URL,
		"NO_COLOR=1",
	}, h.ExtraEnv...)
}

// Result is what "gemini -p -o stream-json" reported.
type Result struct {
	SessionID string   // the init event's session_id
	Events    []Event  // every JSONL event
	Errors    []string // error events
	Message   string   // the assistant's text, joined

	Stdout, Stderr string
}

// Event is one line of "-o stream-json".
type Event struct {
	Type      string          `json:"type"`
	SessionID string          `json:"session_id"`
	Role      string          `json:"role"`
	Content   string          `json:"content"`
	ToolName  string          `json:"tool_name"`
	Status    string          `json:"status"`
	Output    string          `json:"output"`
	Raw       json.RawMessage `json:"-"`
}

// Run runs "gemini -p PROMPT" (a new session, or what flags say: --resume
// ID, --session-id ID), and fails the test unless it exits 0.
func (h *Host) Run(tb testing.TB, prompt string, flags ...string) Result {
	tb.Helper()
	args := append([]string{"-o", "stream-json"}, flags...)
	args = append(args, "-p", prompt)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Gemini, args...)
	cmd.Dir, cmd.Env = h.Project, h.Env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	line := fmt.Sprintf("gemini %s: %v in %v", strings.Join(quoteArgs(args), " "), errOrOK(err), time.Since(start).Round(time.Millisecond))
	tb.Log(line)
	h.runsMu.Lock()
	h.runs = append(h.runs, line+"\nstdout:\n"+tail(res.Stdout, 60)+"\nstderr:\n"+tail(res.Stderr, 60))
	h.runsMu.Unlock()
	sc := bufio.NewScanner(strings.NewReader(res.Stdout))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var msg []string
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		e.Raw = append(json.RawMessage(nil), sc.Bytes()...)
		res.Events = append(res.Events, e)
		switch e.Type {
		case "init":
			res.SessionID = e.SessionID
		case "error":
			res.Errors = append(res.Errors, string(e.Raw))
		case "message":
			if e.Role == "assistant" {
				msg = append(msg, e.Content)
			}
		}
	}
	res.Message = strings.Join(msg, "")
	if err != nil {
		tb.Fatalf("gemini: %v\nstdout:\n%s\nstderr:\n%s", err, tail(res.Stdout, 80), tail(res.Stderr, 80))
	}
	if strings.Contains(res.Stderr, "strict mode:") {
		tb.Errorf("gemini's schema validator warned about a tool schema:\n%s", res.Stderr)
	}
	if res.SessionID == "" {
		tb.Fatalf("gemini: no init event with a session_id\nstdout:\n%s\nstderr:\n%s", tail(res.Stdout, 80), tail(res.Stderr, 80))
	}
	return res
}

// Interactive starts the interactive CLI in a terminal (tmux) and waits
// for its prompt.
func (h *Host) Interactive(tb testing.TB, flags ...string) *harness.Term {
	tb.Helper()
	var env []string
	for _, e := range h.Env() {
		if !strings.HasPrefix(e, "TERM=") {
			env = append(env, e)
		}
	}
	env = append(env, "TERM=xterm-256color")
	t := harness.NewTerm(tb, h.Project, env, 120, 40, append([]string{h.Gemini}, flags...)...)
	t.WaitFor(60*time.Second, "the prompt", func(s string) bool { return strings.Contains(s, "Type your message") })
	return t
}

func errOrOK(err error) any {
	if err == nil {
		return "ok"
	}
	return err
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \"'") {
			a = strconv.Quote(a)
		}
		out[i] = a
	}
	return out
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = append([]string{fmt.Sprintf("... (%d lines before)", len(l)-lines)}, l[len(l)-lines:]...)
	}
	return strings.Join(l, "\n")
}
