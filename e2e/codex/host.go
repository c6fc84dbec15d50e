// Package codex drives the real Codex CLI ("codex exec") against a
// scripted model API (e2e/modelapi, the Responses API) and a tasksessiond
// daemon, set up by "tasksessiond setup codex": the MCP server "tasks"
// running "tasksessiond mcp", which binds each call to the Codex thread its
// _meta names, and the SessionStart hook "tasksessiond hook codex" in
// $CODEX_HOME/hooks.json, trusted. Each Host
// has its own HOME and CODEX_HOME, so tests run in parallel and never read
// the user's configuration.
package codex

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	codexhost "github.com/tasksessiond/tasksessiond/internal/host/codex"
)

// Version is the Codex CLI release these tests pin; e2e/install-hosts.sh
// installs it.
const Version = "0.169.0"

// EnvBinary overrides where the codex binary is looked for.
const EnvBinary = "TASKSESSIOND_E2E_CODEX"

// CLI is the pinned Codex CLI, for harness.RequireHost.
var CLI = harness.CLI{Name: "Codex CLI", Install: "codex", Version: Version, Bin: "codex", Env: EnvBinary}

// Model is the model name the scripted API sees.
const Model = "gpt-5.5"

// Server is the MCP server's name in config.toml; Codex offers its tools
// to the model in the namespace "mcp__tasks__".
const Server = "tasks"

// Options configure a Host.
type Options struct {
	// Respond scripts the model (see modelapi.Script, modelapi.Steps).
	Respond modelapi.Responder
	// Daemon is a daemon to share (with another host's harness); by
	// default the Host makes its own.
	Daemon *harness.Daemon
	// NoDaemon leaves the daemon down (Start it later with h.Daemon.Start).
	NoDaemon bool
	// NoHook leaves out the SessionStart hook.
	NoHook bool
	// Session binds every thread to one daemon session (setup --session):
	// the bridge's --session NAME --create, the hook's --session NAME.
	Session string
	// ConfigFile, when set, is config.toml as the user wrote it (comments
	// and all), before setup: the harness's provider and project trust
	// are then the test's to put in it (see UserConfig).
	ConfigFile string
	// NoSetup leaves "tasksessiond setup codex" out: the test runs it.
	NoSetup bool
	// Config is more config.toml, appended (top-level keys only, e.g.
	// "model_auto_compact_token_limit = 20000").
	Config string
	// Model is the model config.toml names (default Model, of Codex's
	// catalog). A model outside the catalog gets Codex's fallback
	// metadata: tool output cut past 10,000 bytes, MCP tools not deferred.
	Model string
	// Noisy allows the bridge and the hook to write to stderr; by
	// default a test whose bridge or hook said anything there fails.
	Noisy bool
}

// Host is one isolated Codex CLI installation: its HOME, CODEX_HOME and
// project dir, wired to a scripted model API and a tasksessiond daemon.
// Bin is the codex binary.
type Host struct {
	*harness.Host
	CodexHome string // CODEX_HOME: config.toml, hooks.json, sessions/ (the rollouts)
}

// New sets up a Host and starts its daemon (unless opts.NoDaemon or
// opts.Daemon). When the test fails, the runs' output, the hook runs and
// the model requests are logged.
func New(tb testing.TB, opts Options) *Host {
	tb.Helper()
	h := &Host{Host: harness.NewHost(tb, harness.HostSetup{
		CLI:      CLI,
		Model:    modelapi.Config{Respond: opts.Respond, Classify: Classify, Default: DefaultReply},
		Daemon:   opts.Daemon,
		NoDaemon: opts.NoDaemon,
		Noisy:    opts.Noisy,
	})}
	h.CodexHome = filepath.Join(h.Home, ".codex")
	h.Mkdir(h.CodexHome)
	h.Vars = []string{
		"CODEX_HOME=" + h.CodexHome,
		apiKeyEnv + "=sk-e2e-dummy-key",
		"RUST_LOG=warn",
		"NO_COLOR=1",
	}
	// Setup gives the hook --socket and --db: Codex runs hooks in its own
	// environment, which does not hold the MCP server's env from
	// config.toml, and a hook that starts the daemon must start it on the
	// test's database (TestDaemonKilled).
	h.Record(harness.Recording{Vars: []string{"TASKSESSIOND_SOCKET", "TASKSESSIOND_DB"}})
	text := opts.ConfigFile
	if text == "" {
		text = h.UserConfig(opts.Model, opts.Config)
	}
	h.WriteFile(filepath.Join(h.CodexHome, "config.toml"), text, 0o600)
	if !opts.NoSetup {
		var flags []string
		if opts.NoHook {
			flags = append(flags, "--no-hook")
		}
		if opts.Session != "" {
			flags = append(flags, "--session", opts.Session)
		}
		h.Setup(tb, "codex", flags...)
	}
	return h
}

const apiKeyEnv = "E2E_CODEX_API_KEY"

// UserConfig is $CODEX_HOME/config.toml as the harness's user has it
// before setup: the scripted model provider, the project trusted, and
// more (top-level keys).
func (h *Host) UserConfig(model, more string) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	if model == "" {
		model = Model
	}
	p(`model = %s`, tq(model))
	p(`model_provider = "e2e"`)
	p(`approval_policy = "never"`)
	p(`sandbox_mode = "read-only"`)
	p(`check_for_update_on_startup = false`)
	if more != "" {
		p("%s", more)
	}
	p(``)
	p(`[model_providers.e2e]`)
	p(`name = "e2e scripted model"`)
	p(`base_url = %s`, tq(h.API.URL+"/v1"))
	p(`wire_api = "responses"`)
	p(`env_key = %s`, tq(apiKeyEnv))
	p(`request_max_retries = 0`)
	p(`stream_max_retries = 0`)
	p(`stream_idle_timeout_ms = 60000`)
	p(``)
	p(`[projects.%s]`, tq(h.Project))
	p(`trust_level = "trusted"`)
	return b.String()
}

// HookTrustHash is the hash Codex records as a hook's trusted_hash
// (internal/host/codex, which setup writes).
func HookTrustHash(event, matcher, command string, timeoutSec int) string {
	return codexhost.HookTrustHash(event, matcher, command, timeoutSec)
}

// tq quotes s as a TOML basic string.
func tq(s string) string {
	b, _ := json.Marshal(s) // JSON string escapes are valid TOML basic-string escapes
	return string(b)
}

func tqList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = tq(s)
	}
	return strings.Join(q, ", ")
}

// Result is what "codex exec --json" reported.
type Result struct {
	ThreadID string   // thread.started's thread_id
	Message  string   // the last agent message
	Events   []Event  // every JSONL event
	Errors   []string // error events' messages
	Usage    map[string]any

	Stdout, Stderr string
}

// Event is one line of "codex exec --json".
type Event struct {
	Type     string          `json:"type"`
	ThreadID string          `json:"thread_id"`
	Item     json.RawMessage `json:"item"`
	Message  string          `json:"message"`
	Usage    map[string]any  `json:"usage"`
	Raw      json.RawMessage `json:"-"`
}

// Item is an event's item (item.started, item.completed).
type Item struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"` // agent_message, mcp_tool_call, reasoning, ...
	Text      string          `json:"text"`
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Status    string          `json:"status"`
	Arguments json.RawMessage `json:"arguments"`
	Result    json.RawMessage `json:"result"`
	Error     json.RawMessage `json:"error"`
}

// Items returns the completed items of one type ("" for all).
func (r Result) Items(typ string) []Item {
	var out []Item
	for _, e := range r.Events {
		if e.Type != "item.completed" {
			continue
		}
		var it Item
		if json.Unmarshal(e.Item, &it) == nil && (typ == "" || it.Type == typ) {
			out = append(out, it)
		}
	}
	return out
}

// Exec runs "codex exec --json PROMPT" (a new thread), and fails the test
// unless it exits 0.
func (h *Host) Exec(tb testing.TB, prompt string, flags ...string) Result {
	tb.Helper()
	return h.run(tb, append(append([]string{"exec"}, h.execFlags()...), append(flags, "--", prompt)...))
}

// Resume runs "codex exec resume --json ID PROMPT".
func (h *Host) Resume(tb testing.TB, id, prompt string, flags ...string) Result {
	tb.Helper()
	return h.run(tb, append(append([]string{"exec"}, h.execFlags()...), append(append([]string{"resume"}, flags...), id, prompt)...))
}

// Fork runs "codex exec fork --json ID PROMPT": a new thread whose
// history is a copy of ID's.
func (h *Host) Fork(tb testing.TB, id, prompt string, flags ...string) Result {
	tb.Helper()
	return h.run(tb, append(append([]string{"exec"}, h.execFlags()...), append(append([]string{"fork"}, flags...), id, prompt)...))
}

func (h *Host) execFlags() []string {
	return []string{"--json", "--skip-git-repo-check", "-C", h.Project, "--color", "never"}
}

func (h *Host) run(tb testing.TB, args []string) Result {
	tb.Helper()
	out := h.Command(tb, 90*time.Second, args...)
	res := Result{Stdout: out.Stdout, Stderr: out.Stderr}
	for _, line := range harness.JSONLines(res.Stdout) {
		var e Event
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		e.Raw = line
		res.Events = append(res.Events, e)
		switch e.Type {
		case "thread.started":
			res.ThreadID = e.ThreadID
		case "error", "turn.failed":
			res.Errors = append(res.Errors, string(e.Raw))
		case "turn.completed":
			res.Usage = e.Usage
		}
	}
	for _, it := range res.Items("agent_message") {
		res.Message = it.Text
	}
	if out.Err != nil {
		tb.Fatalf("codex exec: %v\nstdout:\n%s\nstderr:\n%s", out.Err, res.Stdout, harness.Tail(res.Stderr, 80))
	}
	if res.ThreadID == "" {
		tb.Fatalf("codex exec: no thread.started event\nstdout:\n%s\nstderr:\n%s", res.Stdout, harness.Tail(res.Stderr, 80))
	}
	return res
}

// Rollout returns the path of a thread's rollout file (the JSONL session
// record under $CODEX_HOME/sessions), or "".
func (h *Host) Rollout(id string) string {
	var found string
	filepath.WalkDir(filepath.Join(h.CodexHome, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(filepath.Base(p), id) {
			found = p
		}
		return nil
	})
	return found
}
