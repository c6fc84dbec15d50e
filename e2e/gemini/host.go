// Package gemini drives the real Gemini CLI ("gemini -p") against a
// scripted Gemini API (e2e/modelapi, GOOGLE_GEMINI_BASE_URL, a dummy API
// key) and a tasksessiond daemon: the MCP server "tasks" running
// "tasksessiond mcp", and the hooks "tasksessiond hook gemini" in
// ~/.gemini/settings.json. Each Host has its own HOME, so tests run in
// parallel and never read the user's configuration.
package gemini

import (
	"encoding/json"
	"path/filepath"
	"strings"
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

// CLI is the pinned Gemini CLI, for harness.RequireHost.
var CLI = harness.CLI{Name: "Gemini CLI", Install: "gemini", Version: Version, Bin: "gemini", Env: EnvBinary}

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

// Host is one isolated Gemini CLI installation: HOME holds
// .gemini/settings.json and .gemini/tmp/<project>/chats (the sessions).
// Bin is the gemini binary.
type Host struct {
	*harness.Host
}

// New sets up a Host and starts its daemon (unless opts.NoDaemon or
// opts.Daemon).
func New(tb testing.TB, opts Options) *Host {
	tb.Helper()
	h := &Host{Host: harness.NewHost(tb, harness.HostSetup{
		CLI:      CLI,
		Model:    modelapi.Config{Respond: opts.Respond, Classify: Classify, Default: DefaultReply},
		Daemon:   opts.Daemon,
		NoDaemon: opts.NoDaemon,
		Noisy:    opts.Noisy,
	})}
	h.Mkdir(filepath.Join(h.Home, ".gemini"))
	h.Vars = []string{
		"GEMINI_API_KEY=e2e-dummy-key",
		"GOOGLE_GEMINI_BASE_URL=" + h.API.URL,
		"NO_COLOR=1",
	}
	h.Record(harness.Recording{
		HookArgs: append([]string{"hook", "gemini", "--socket", h.Daemon.Socket, "--db", h.Daemon.DB}, opts.HookArgs...),
		Vars:     []string{"GEMINI_SESSION_ID", "GEMINI_CLI"},
	})
	h.writeSettings(opts)
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
			"command": h.Rec.MCPCommand,
			"args":    args,
			"env":     obj{"TASKSESSIOND_SOCKET": h.Daemon.Socket, "TASKSESSIOND_DB": h.Daemon.DB},
			"trust":   true,
			"timeout": 60000,
		}},
	}
	if !opts.NoHook {
		hooks := obj{}
		for _, ev := range HookEvents {
			hooks[ev] = []any{obj{"hooks": []any{obj{"type": "command", "command": h.Rec.HookCommand, "name": "tasksessiond"}}}}
		}
		s["hooks"] = hooks
	}
	for k, v := range opts.Settings {
		s[k] = v
	}
	h.WriteJSON(filepath.Join(h.Home, ".gemini", "settings.json"), s)
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
	out := h.Command(tb, 120*time.Second, append(args, "-p", prompt)...)
	res := Result{Stdout: out.Stdout, Stderr: out.Stderr}
	var msg []string
	for _, line := range harness.JSONLines(res.Stdout) {
		var e Event
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		e.Raw = line
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
	if out.Err != nil {
		tb.Fatalf("gemini: %v\nstdout:\n%s\nstderr:\n%s", out.Err, harness.Tail(res.Stdout, 80), harness.Tail(res.Stderr, 80))
	}
	if strings.Contains(res.Stderr, "strict mode:") {
		tb.Errorf("gemini's schema validator warned about a tool schema:\n%s", res.Stderr)
	}
	if res.SessionID == "" {
		tb.Fatalf("gemini: no init event with a session_id\nstdout:\n%s\nstderr:\n%s", harness.Tail(res.Stdout, 80), harness.Tail(res.Stderr, 80))
	}
	return res
}

// Interactive starts the interactive CLI in a terminal (tmux) and waits
// for its prompt.
func (h *Host) Interactive(tb testing.TB, flags ...string) *harness.Term {
	tb.Helper()
	return h.StartTerm(tb, 60*time.Second, func(s string) bool { return strings.Contains(s, "Type your message") }, flags...)
}
