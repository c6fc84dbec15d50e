// Package qwen drives the real Qwen Code ("qwen -p") against a scripted
// OpenAI chat completions API (e2e/modelapi, --auth-type openai,
// OPENAI_BASE_URL, a dummy key) and a tasksessiond daemon: the MCP server
// "tasks" running "tasksessiond mcp", and the SessionStart hook
// "tasksessiond hook qwen", in ~/.qwen/settings.json. Each Host has its own
// HOME, so tests run in parallel and never read the user's configuration.
package qwen

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// Version is the Qwen Code release these tests pin; e2e/install-hosts.sh
// installs it.
const Version = "0.24.4"

// EnvBinary overrides where the qwen binary is looked for.
const EnvBinary = "TASKSESSIOND_E2E_QWEN"

// CLI is the pinned Qwen Code, for harness.RequireHost.
var CLI = harness.CLI{Name: "Qwen Code", Install: "qwen", Version: Version, Bin: "qwen", Env: EnvBinary}

// Model is the model the CLI is told to use.
const Model = "qwen3-coder-plus"

// Server is the MCP server's name in settings.json.
const Server = "tasks"

// Tool names as the model calls them, through Qwen Code's tool_call.
const (
	TaskCreate = "mcp__" + Server + "__TaskCreate"
	TaskList   = "mcp__" + Server + "__TaskList"
	TaskGet    = "mcp__" + Server + "__TaskGet"
	TaskUpdate = "mcp__" + Server + "__TaskUpdate"
)

// Options configure a Host.
type Options struct {
	// Respond scripts the model (see modelapi.Script, modelapi.Steps).
	Respond modelapi.Responder
	// Daemon is a daemon to share; by default the Host makes its own.
	Daemon *harness.Daemon
	// NoDaemon leaves the daemon down.
	NoDaemon bool
	// NoHook leaves out the hook.
	NoHook bool
	// Settings are merged into settings.json at the top level.
	Settings map[string]any
	// NoSetup leaves "tasksessiond setup qwen" out: the test runs it.
	NoSetup bool
	// Noisy allows the bridge and the hook to write to stderr.
	Noisy bool
}

// Host is one isolated Qwen Code installation: HOME holds
// .qwen/settings.json and .qwen/projects/<project>/chats (the sessions).
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
	h.Mkdir(filepath.Join(h.Home, ".qwen"))
	h.Vars = []string{
		"OPENAI_API_KEY=sk-e2e-dummy-key",
		"OPENAI_BASE_URL=" + h.API.URL + "/v1",
		"OPENAI_MODEL=" + Model,
		"NO_COLOR=1",
		"NO_BROWSER=1",
	}
	h.Record(harness.Recording{Vars: []string{"QWEN_CODE_SESSION_ID"}})
	b, err := json.MarshalIndent(UserSettings(opts.Settings), "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	h.WriteFile(filepath.Join(h.Home, ".qwen", "settings.json"), string(b)+"\n", 0o600)
	if !opts.NoSetup {
		var flags []string
		if opts.NoHook {
			flags = append(flags, "--no-hook")
		}
		h.Setup(tb, "qwen", flags...)
	}
	return h
}

// UserSettings is ~/.qwen/settings.json as the harness's user has it
// before setup: OpenAI-compatible auth, nothing that phones home, the
// model, and more (top-level keys).
func UserSettings(more map[string]any) map[string]any {
	type obj = map[string]any
	s := obj{
		"security":  obj{"auth": obj{"selectedType": "openai"}, "folderTrust": obj{"enabled": false}},
		"general":   obj{"disableAutoUpdate": true, "disableUpdateNag": true, "enableAutoUpdate": false},
		"privacy":   obj{"usageStatisticsEnabled": false},
		"telemetry": obj{"enabled": false},
		"model":     obj{"name": Model},
		// Its memory agent runs after a turn, with tools of its own.
		"memory": obj{"enableManagedAutoMemory": false},
	}
	for k, v := range more {
		s[k] = v
	}
	return s
}

// Result is what "qwen -p -o stream-json" reported.
type Result struct {
	SessionID string  // the session id its events name
	Events    []Event // every JSONL event
	Message   string  // the result event's text
	Stdout    string
	Stderr    string
}

// Event is one line of "-o stream-json".
type Event struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	SessionID string          `json:"session_id"`
	Result    string          `json:"result"`
	IsError   bool            `json:"is_error"`
	Raw       json.RawMessage `json:"-"`
}

// Run runs "qwen -p PROMPT" (a new session, or what flags say: --resume
// ID), and fails the test unless it exits 0.
func (h *Host) Run(tb testing.TB, prompt string, flags ...string) Result {
	tb.Helper()
	return h.RunFor(tb, 180*time.Second, prompt, flags...)
}

// RunFor is Run within timeout.
func (h *Host) RunFor(tb testing.TB, timeout time.Duration, prompt string, flags ...string) Result {
	tb.Helper()
	args := append([]string{"--auth-type", "openai", "--approval-mode", "yolo", "-o", "stream-json"}, flags...)
	out := h.Command(tb, timeout, append(args, "-p", prompt)...)
	res := Result{Stdout: out.Stdout, Stderr: out.Stderr}
	for _, line := range harness.JSONLines(res.Stdout) {
		var e Event
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		e.Raw = line
		res.Events = append(res.Events, e)
		if e.SessionID != "" && res.SessionID == "" {
			res.SessionID = e.SessionID
		}
		if e.Type == "result" {
			res.Message = e.Result
		}
	}
	if out.Err != nil {
		tb.Fatalf("qwen: %v\nstdout:\n%s\nstderr:\n%s", out.Err, harness.Tail(res.Stdout, 80), harness.Tail(res.Stderr, 80))
	}
	if res.SessionID == "" {
		tb.Fatalf("qwen: no event with a session_id\nstdout:\n%s\nstderr:\n%s", harness.Tail(res.Stdout, 80), harness.Tail(res.Stderr, 80))
	}
	return res
}

// Hooks returns the hook's runs so far, in order (of one event; "" for all).
func (h *Host) Hooks(event string) []harness.HookRun {
	var out []harness.HookRun
	for _, r := range h.Rec.Hooks() {
		if event == "" || r.Event == event {
			out = append(out, r)
		}
	}
	return out
}

// Chats returns the paths of the chat records Qwen Code keeps.
func (h *Host) Chats() []string {
	m, _ := filepath.Glob(filepath.Join(h.Home, ".qwen", "projects", "*", "chats", "*.jsonl"))
	return m
}

// ToolText is what Qwen Code showed the model of a tool result: its text
// without the framing it may add.
func ToolText(s string) string { return strings.TrimSpace(s) }
