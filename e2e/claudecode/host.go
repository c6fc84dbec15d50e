// Package claudecode drives the real Claude Code CLI against a scripted
// model API (e2e/modelapi) and a tasksessiond daemon, set up as the
// README says, by "tasksessiond setup claude-code": the MCP server "tasks"
// running "tasksessiond mcp", the allow rule, and the SessionStart hook
// "tasksessiond hook claude-code". Each Host has its own HOME and CLAUDE_CONFIG_DIR, so tests
// run in parallel and never read the user's configuration.
package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// Version is the Claude Code release these tests pin; e2e/install-hosts.sh
// installs it.
const Version = "2.1.328"

// EnvBinary overrides where the claude binary is looked for.
const EnvBinary = "TASKSESSIOND_E2E_CLAUDE"

// CLI is the pinned Claude Code, for harness.RequireHost.
var CLI = harness.CLI{Name: "Claude Code", Install: "claude-code", Version: Version, Bin: "claude", Env: EnvBinary}

// The model names the scripted API sees. Claude Code sends side requests
// (titles, ...) to its small fast model, which is pinned apart so Classify
// can tell them by model too.
const (
	MainModel  = "claude-sonnet-4-6"
	SmallModel = "claude-haiku-4-5"
)

// Options configure a Host.
type Options struct {
	// Respond scripts the model (see modelapi.Script, modelapi.Steps).
	Respond modelapi.Responder
	// NoDaemon leaves the daemon down (Start it later with h.Daemon.Start).
	NoDaemon bool
	// NoHook leaves out the SessionStart hook.
	NoHook bool
	// Settings are merged into settings.json, over the harness's.
	Settings map[string]any
	// SettingsFile, when set, is settings.json as written (a user's own,
	// comments and all), instead of the harness's.
	SettingsFile string
	// NoSetup leaves "tasksessiond setup claude-code" out: the test runs
	// it (h.Setup).
	NoSetup bool
	// Session binds every conversation to one daemon session (setup
	// --session: the bridge's --session NAME --create, the hook's
	// --session NAME).
	Session string
	// Noisy allows the bridge and the hook to write to stderr; by
	// default a test whose bridge or hook said anything there fails
	// (both are silent unless something is wrong).
	Noisy bool
}

// Host is one isolated Claude Code installation: its HOME, config dir and
// project dir, wired to a scripted model API and a tasksessiond daemon.
// Bin is the claude binary.
type Host struct {
	*harness.Host
	Config string // CLAUDE_CONFIG_DIR
	Debug  string // claude's debug log (--debug-file), appended by every run
}

// New sets up a Host and starts its daemon (unless opts.NoDaemon). When the
// test fails, claude's debug log and the model requests are logged.
func New(tb testing.TB, opts Options) *Host {
	tb.Helper()
	h := &Host{Host: harness.NewHost(tb, harness.HostSetup{
		CLI:      CLI,
		Model:    modelapi.Config{Respond: opts.Respond, Classify: Classify, Default: DefaultReply},
		NoDaemon: opts.NoDaemon,
		Noisy:    opts.Noisy,
	})}
	h.Config = filepath.Join(h.Home, ".claude")
	h.Debug = filepath.Join(h.Root, "claude-debug.log")
	h.Mkdir(h.Config)
	h.Term = "xterm-256color"
	h.Vars = append([]string{
		"CLAUDE_CONFIG_DIR=" + h.Config,
		"ANTHROPIC_BASE_URL=" + h.API.URL,
		"ANTHROPIC_API_KEY=" + apiKey,
		"ANTHROPIC_MODEL=" + MainModel,
		"ANTHROPIC_SMALL_FAST_MODEL=" + SmallModel,
		"ANTHROPIC_DEFAULT_HAIKU_MODEL=" + SmallModel,
		"ANTHROPIC_DEFAULT_SONNET_MODEL=" + MainModel,
		"ANTHROPIC_DEFAULT_OPUS_MODEL=" + MainModel,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1",
		"CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1",
		"MCP_TIMEOUT=10000",
		// How long the first request waits for MCP servers to connect
		// (5 s by default, then it goes out saying "still connecting").
		// CI runs every package and host at once on two cores; the bridge
		// once missed the 5 s there (TestNoDaemonAtStart).
		"MCP_CONNECT_TIMEOUT_MS=30000",
	}, h.Daemon.Env()...)
	h.Record(harness.Recording{Vars: []string{"CLAUDE_PID", "CLAUDE_CODE_SESSION_ID"}})
	h.WriteJSON(filepath.Join(h.Config, ".claude.json"), h.globalConfig())
	if opts.SettingsFile != "" {
		h.WriteFile(filepath.Join(h.Config, "settings.json"), opts.SettingsFile, 0o600)
	} else {
		h.WriteJSON(filepath.Join(h.Config, "settings.json"), h.settings(opts))
	}
	if !opts.NoSetup {
		var flags []string
		if opts.NoHook {
			flags = append(flags, "--no-hook")
		}
		if opts.Session != "" {
			flags = append(flags, "--session", opts.Session)
		}
		h.Setup(tb, "claude-code", flags...)
	}
	h.AtFailure(func(tb testing.TB) {
		if b, err := os.ReadFile(h.Debug); err == nil {
			tb.Logf("claude debug log (%s):\n%s", h.Debug, harness.Tail(string(b), 400))
			if os.Getenv("E2E_KEEP") != "" {
				os.WriteFile(filepath.Join(os.Getenv("E2E_KEEP"), tb.Name()+".debug.log"), b, 0o644)
			}
		}
	})
	return h
}

// globalConfig is the seeded ~/.claude.json: onboarding done, the project
// trusted, the dummy API key approved. "tasksessiond setup claude-code"
// adds the MCP server (what "claude mcp add --scope user" writes).
func (h *Host) globalConfig() map[string]any {
	return map[string]any{
		"hasCompletedOnboarding":        true,
		"lastOnboardingVersion":         Version,
		"numStartups":                   1,
		"theme":                         "dark",
		"autoUpdates":                   false,
		"bypassPermissionsModeAccepted": true,
		"customApiKeyResponses":         map[string]any{"approved": []string{apiKey[len(apiKey)-20:]}, "rejected": []string{}},
		"projects": map[string]any{
			h.Project: map[string]any{
				"hasTrustDialogAccepted":        true,
				"hasCompletedProjectOnboarding": true,
				"allowedTools":                  []string{},
			},
		},
	}
}

// HookSources are the SessionStart sources Claude Code 2.1.328 sends (its
// hook input schema: startup, resume, clear, compact, fork); the hook must
// see every one: clear and fork start a new conversation whose id the
// bridge must learn, and a fork's list is rebuilt from its transcript.
var HookSources = []string{"startup", "resume", "clear", "compact", "fork"}

// settings is the seeded settings.json, as a user has it before setup
// adds the allow rule and the hook (no matcher: every source, as the
// README has it, TestReadmeHookMatcher).
func (h *Host) settings(opts Options) map[string]any {
	s := map[string]any{"env": map[string]string{}}
	for k, v := range opts.Settings {
		s[k] = v
	}
	return s
}

const apiKey = "sk-ant-api03-e2e-dummy-key-tasksessiond-0123456789"

// Result is what "claude -p --output-format json" prints.
type Result struct {
	Type      string  `json:"type"`
	Subtype   string  `json:"subtype"`
	IsError   bool    `json:"is_error"`
	Result    string  `json:"result"`
	SessionID string  `json:"session_id"`
	NumTurns  int     `json:"num_turns"`
	CostUSD   float64 `json:"total_cost_usd"`

	Stdout, Stderr string `json:"-"`
}

// Print runs "claude -p PROMPT --output-format json" with extra flags
// (--resume ID, --fork-session, --session-id ID, ...), and fails the test
// unless it exits 0 with a result.
func (h *Host) Print(tb testing.TB, prompt string, flags ...string) Result {
	tb.Helper()
	args := append([]string{"-p", prompt, "--output-format", "json", "--debug-file", h.Debug}, flags...)
	out := h.Command(tb, 90*time.Second, args...)
	res := Result{Stdout: out.Stdout, Stderr: out.Stderr}
	if out.Err != nil {
		tb.Fatalf("claude -p: %v\nstdout:\n%s\nstderr:\n%s", out.Err, res.Stdout, res.Stderr)
	}
	if err := json.Unmarshal([]byte(out.Stdout), &res); err != nil {
		tb.Fatalf("claude -p: output is not a JSON result: %v\nstdout:\n%s\nstderr:\n%s", err, res.Stdout, res.Stderr)
	}
	if res.IsError {
		tb.Fatalf("claude -p: an error result: %s\nstdout:\n%s\nstderr:\n%s", res.Result, res.Stdout, res.Stderr)
	}
	return res
}

// Interactive starts claude in a terminal (tmux) with extra flags, and
// waits for its prompt.
func (h *Host) Interactive(tb testing.TB, flags ...string) *harness.Term {
	tb.Helper()
	return h.StartTerm(tb, 30*time.Second, func(s string) bool {
		return strings.Contains(s, "? for shortcuts") || strings.Contains(s, "│ >") || strings.Contains(s, "❯")
	}, append([]string{"--debug-file", h.Debug}, flags...)...)
}
