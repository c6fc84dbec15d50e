// Package gemini drives the real Gemini CLI ("gemini -p") against a
// scripted Gemini API (e2e/modelapi, GOOGLE_GEMINI_BASE_URL, a dummy API
// key) and a tasksessiond daemon, set up by "tasksessiond setup gemini":
// the MCP server "tasks" running "tasksessiond mcp", and the hooks
// "tasksessiond hook gemini" in ~/.gemini/settings.json. Each Host has
// its own HOME, so tests run in parallel and never read the user's
// configuration.
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
	// Session binds every session to one daemon session (setup
	// --session).
	Session string
	// Settings are merged into settings.json at the top level.
	Settings map[string]any
	// SettingsFile, when set, is settings.json as the user wrote it
	// (comments and all) instead of the harness's (see UserSettings).
	SettingsFile string
	// NoSetup leaves "tasksessiond setup gemini" out: the test runs it.
	NoSetup bool
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
	h.Record(harness.Recording{Vars: []string{"GEMINI_SESSION_ID", "GEMINI_CLI"}})
	text := opts.SettingsFile
	if text == "" {
		b, err := json.MarshalIndent(UserSettings(opts.Settings), "", "  ")
		if err != nil {
			tb.Fatal(err)
		}
		text = string(b) + "\n"
	}
	h.WriteFile(filepath.Join(h.Home, ".gemini", "settings.json"), text, 0o600)
	if !opts.NoSetup {
		var flags []string
		if opts.NoHook {
			flags = append(flags, "--no-hook")
		}
		if opts.Session != "" {
			flags = append(flags, "--session", opts.Session)
		}
		h.Setup(tb, "gemini", flags...)
	}
	return h
}

// HookEvents are the events setup registers the hook for, as the
// README's fragment does.
var HookEvents = []string{"SessionStart", "BeforeModel"}

// UserSettings is ~/.gemini/settings.json as the harness's user has it
// before setup: API-key auth, nothing that phones home, the model, and
// more (top-level keys).
func UserSettings(more map[string]any) map[string]any {
	type obj = map[string]any
	s := obj{
		"security":  obj{"auth": obj{"selectedType": "gemini-api-key"}, "folderTrust": obj{"enabled": false}},
		"general":   obj{"disableAutoUpdate": true, "disableUpdateNag": true, "enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"privacy":   obj{"usageStatisticsEnabled": false},
		"telemetry": obj{"enabled": false},
		"model":     obj{"name": Model},
	}
	for k, v := range more {
		s[k] = v
	}
	return s
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
