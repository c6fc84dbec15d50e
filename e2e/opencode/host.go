// Package opencode drives the real OpenCode CLI ("opencode run") against a
// scripted model API (e2e/modelapi, as an OpenAI-compatible provider) and a
// tasksessiond daemon, with the plugin installed as contrib/opencode/README.md
// says: "tasksessiond setup opencode". Each Host has its
// own HOME and XDG dirs, so tests run in parallel and never read the user's
// configuration or sessions.
package opencode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// Version is the OpenCode release these tests pin; e2e/install-hosts.sh
// installs it.
const Version = "1.18.33"

// EnvBinary overrides where the opencode binary is looked for.
const EnvBinary = "TASKSESSIOND_E2E_OPENCODE"

// CLI is the pinned OpenCode, for harness.RequireHost.
var CLI = harness.CLI{Name: "OpenCode", Install: "opencode", Version: Version, Bin: "opencode", Env: EnvBinary}

// The provider and models the scripted API serves, as opencode.json
// declares them. The context window is small, so that a reply reporting
// ContextLimit input tokens makes OpenCode compact.
const (
	Provider     = "e2e"
	MainModel    = "scripted"
	SmallModel   = "scripted-small"
	ContextLimit = 64000
	OutputLimit  = 4096
)

// Options configure a Host.
type Options struct {
	// Respond scripts the model (see modelapi.Script, modelapi.Steps).
	Respond modelapi.Responder
	// Daemon is a daemon to share (with another host's harness); by
	// default the Host makes its own.
	Daemon *harness.Daemon
	// NoDaemon leaves the daemon down (the plugin starts one, or Start it
	// with h.Daemon.Start).
	NoDaemon bool
	// Session, when set, is TASKSESSIOND_SESSION in every run's
	// environment: the plugin binds every OpenCode session to that daemon
	// session (a list shared across sessions and hosts).
	Session string
	// Config is merged into opencode.json (top-level keys), over the
	// harness's, before the plugin's installer merges its fragment.
	Config map[string]any
	// Env is added to every run's environment.
	Env []string
	// Commented seeds opencode.json as JSONC, as a user may keep it (a
	// comment on top, a trailing comma), before the installer edits it.
	Commented bool
	// ConfigFile, when set, is the config file as the user wrote it, at
	// ConfigName (opencode.json or opencode.jsonc), instead of the
	// harness's (see UserConfig).
	ConfigFile, ConfigName string
	// NoSetup leaves "tasksessiond setup opencode" out: the test runs it.
	NoSetup bool
	// KeepTodo takes the installer's "tools" fragment back out of
	// opencode.json, so OpenCode offers its own to-do tools (a control).
	KeepTodo bool
	// Noisy allows the plugin to log warnings; by default a test whose
	// plugin logged one fails (it logs only when something is wrong).
	Noisy bool
}

// Host is one isolated OpenCode installation: its HOME, XDG dirs and
// project dir, wired to a scripted model API and a tasksessiond daemon.
// Bin is the opencode binary; TSD, the tasksessiond binary, is on the
// runs' PATH.
type Host struct {
	*harness.Host
	Config string // $XDG_CONFIG_HOME/opencode: opencode.json, plugin/
	Logs   string // each run's --print-logs output, appended

	opts Options
	mu   sync.Mutex
	runs []Run
}

// New sets up a Host and starts its daemon (unless opts.NoDaemon or
// opts.Daemon). When the test fails, OpenCode's logs and the model
// requests are logged.
func New(tb testing.TB, opts Options) *Host {
	tb.Helper()
	h := &Host{Host: harness.NewHost(tb, harness.HostSetup{
		CLI:      CLI,
		Model:    modelapi.Config{Respond: opts.Respond, Classify: Classify, Default: DefaultReply},
		Daemon:   opts.Daemon,
		NoDaemon: opts.NoDaemon,
		Noisy:    opts.Noisy,
	}), opts: opts}
	deps := pluginDeps(tb)
	h.Config = filepath.Join(h.Home, ".config", "opencode")
	h.Logs = filepath.Join(h.Root, "opencode.log")
	h.Mkdir(h.Config, filepath.Join(h.Home, ".local", "share"), filepath.Join(h.Home, ".local", "state"), filepath.Join(h.Home, ".cache"))
	// tasksessiond on PATH, as a user has it: the plugin starts the
	// daemon with it.
	bin := filepath.Join(h.Root, "bin")
	if err := os.Symlink(h.TSD, filepath.Join(bin, "tasksessiond")); err != nil {
		tb.Fatal(err)
	}
	h.Path = []string{bin}
	h.Vars = append([]string{
		"XDG_CONFIG_HOME=" + filepath.Join(h.Home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(h.Home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(h.Home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(h.Home, ".cache"),
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_CLAUDE_CODE_SKILLS=1",
		"OPENCODE_DISABLE_EXTERNAL_SKILLS=1",
		"OPENCODE_DISABLE_TERMINAL_TITLE=1",
	}, h.Daemon.Env()...)
	if opts.Session != "" {
		h.Vars = append(h.Vars, "TASKSESSIOND_SESSION="+opts.Session)
	}
	h.ExtraEnv = opts.Env
	if opts.ConfigFile != "" {
		h.WriteFile(filepath.Join(h.Config, opts.ConfigName), opts.ConfigFile, 0o600)
	} else {
		h.WriteJSON(filepath.Join(h.Config, "opencode.json"), h.UserConfig())
	}
	if opts.Commented {
		path := filepath.Join(h.Config, "opencode.json")
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		h.WriteFile(path, "// OpenCode settings (JSONC: comments and trailing commas)\n"+strings.TrimSuffix(string(b), "\n}")+", // the last setting\n}\n", 0o600)
	}
	h.install(deps)
	if opts.KeepTodo {
		var c map[string]any
		b, err := os.ReadFile(filepath.Join(h.Config, "opencode.json"))
		if err == nil {
			err = json.Unmarshal(b, &c)
		}
		if err != nil {
			tb.Fatal(err)
		}
		delete(c, "tools")
		h.WriteJSON(filepath.Join(h.Config, "opencode.json"), c)
	}
	h.Quiet(func(tb testing.TB) {
		if w := h.PluginWarnings(); len(w) > 0 {
			tb.Errorf("the plugin logged warnings (it must be quiet unless something is wrong):\n%s", strings.Join(w, "\n"))
		}
	})
	h.AtFailure(func(tb testing.TB) {
		if b, err := os.ReadFile(h.Logs); err == nil {
			tb.Logf("opencode logs (%s):\n%s", h.Logs, harness.Tail(string(b), 300))
		}
	})
	return h
}

// UserConfig is the seeded opencode.json: the scripted API as an
// OpenAI-compatible provider, its models, and nothing that reaches out.
func (h *Host) UserConfig() map[string]any {
	model := func(name string) map[string]any {
		return map[string]any{
			"name":        name,
			"tool_call":   true,
			"temperature": true,
			"limit":       map[string]any{"context": ContextLimit, "output": OutputLimit},
			"cost":        map[string]any{"input": 0, "output": 0},
		}
	}
	c := map[string]any{
		"$schema":     "https://opencode.ai/config.json",
		"model":       Provider + "/" + MainModel,
		"small_model": Provider + "/" + SmallModel,
		"autoupdate":  false,
		"share":       "disabled",
		"provider": map[string]any{
			Provider: map[string]any{
				"npm":  "@ai-sdk/openai-compatible",
				"name": "E2E scripted model",
				"options": map[string]any{
					"baseURL": h.API.URL + "/v1",
					"apiKey":  "sk-e2e-dummy",
				},
				"models": map[string]any{MainModel: model("Scripted"), SmallModel: model("Scripted small")},
			},
		},
	}
	for k, v := range h.opts.Config {
		c[k] = v
	}
	return c
}

// install runs "tasksessiond setup opencode" (the plugin into the host's
// config dir, OpenCode's todowrite off), unless opts.NoSetup, and gives
// that dir the plugin's dependency (@opencode-ai/plugin), which OpenCode
// would otherwise install there from npm at its first start.
func (h *Host) install(deps string) {
	if !h.opts.NoSetup {
		h.Setup(h.TB(), "opencode")
	}
	if err := os.Symlink(filepath.Join(deps, "node_modules"), filepath.Join(h.Config, "node_modules")); err != nil {
		h.TB().Fatal(err)
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(deps, f))
		if err != nil {
			h.TB().Fatal(err)
		}
		h.WriteFile(filepath.Join(h.Config, f), string(b), 0o600)
	}
}

var deps struct {
	once sync.Once
	dir  string
	err  error
}

// pluginDeps returns a directory holding node_modules with
// @opencode-ai/plugin at OpenCode's version (and its package.json and
// package-lock.json), installed from npm once into the e2e cache. OpenCode
// installs the same into its config dir when that has no node_modules; a
// config dir that has them, locked, is left alone.
func pluginDeps(tb testing.TB) string {
	tb.Helper()
	deps.once.Do(func() {
		dir := filepath.Join(harness.CacheDir(), "opencode-plugin-"+Version)
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@opencode-ai", "plugin", "package.json")); err == nil {
			deps.dir = dir
			return
		}
		if _, err := exec.LookPath("npm"); err != nil {
			deps.err = fmt.Errorf("npm is not on PATH: it installs @opencode-ai/plugin@%s for the plugin", Version)
			return
		}
		tmp := dir + ".tmp"
		os.RemoveAll(tmp)
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			deps.err = err
			return
		}
		os.WriteFile(filepath.Join(tmp, "package.json"), []byte("{}\n"), 0o644)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", tmp, "--no-audit", "--no-fund", "--save-exact", "--ignore-scripts", "--loglevel=error", "@opencode-ai/plugin@"+Version)
		if out, err := cmd.CombinedOutput(); err != nil {
			deps.err = fmt.Errorf("npm install @opencode-ai/plugin@%s: %v\n%s", Version, err, out)
			return
		}
		os.RemoveAll(dir)
		if err := os.Rename(tmp, dir); err != nil {
			deps.err = err
			return
		}
		deps.dir = dir
	})
	if deps.err != nil {
		if harness.Required() {
			tb.Fatal(deps.err)
		}
		tb.Skip(deps.err)
	}
	return deps.dir
}

// Run is one "opencode run".
type Run struct {
	Args      []string
	SessionID string           // the session the run worked in (from its events)
	Text      string           // the assistant's text parts, joined
	Events    []map[string]any // the --format json events
	Stdout    string
	Stderr    string
	Err       error
}

// Run runs "opencode run --format json PROMPT" with extra flags
// (--session ID, --agent NAME, ...), and fails the test unless it exits 0.
func (h *Host) Run(tb testing.TB, prompt string, flags ...string) Run {
	tb.Helper()
	r := h.RunErr(tb, prompt, flags...)
	if r.Err != nil {
		tb.Fatalf("opencode run: %v\nstdout:\n%s\nstderr:\n%s", r.Err, r.Stdout, harness.Tail(r.Stderr, 100))
	}
	if r.SessionID == "" {
		tb.Fatalf("opencode run: no session id in its events\nstdout:\n%s\nstderr:\n%s", r.Stdout, harness.Tail(r.Stderr, 100))
	}
	return r
}

// RunErr is Run that returns a failed run instead of failing the test.
func (h *Host) RunErr(tb testing.TB, prompt string, flags ...string) Run {
	tb.Helper()
	args := append([]string{"run", "--format", "json", "--print-logs", "--log-level", "INFO"}, flags...)
	// opencode joins the message's words with spaces, quoting a word
	// that holds one: pass them one by one.
	args = append(args, strings.Fields(prompt)...)
	// Generous: a run takes some 10 CPU-seconds, and a loaded machine
	// (the tests run 6 at once on 2 cores) stretches that a lot.
	out := h.Command(tb, 3*time.Minute, args...)
	r := Run{Args: args, Stdout: out.Stdout, Stderr: out.Stderr, Err: out.Err}
	if f, ferr := os.OpenFile(h.Logs, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); ferr == nil {
		result := any("ok")
		if r.Err != nil {
			result = r.Err
		}
		fmt.Fprintf(f, "==== opencode %s (%v)\n%s\n", strings.Join(args, " "), result, r.Stderr)
		f.Close()
	}
	var texts []string
	for _, line := range harness.JSONLines(r.Stdout) {
		var ev map[string]any
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		r.Events = append(r.Events, ev)
		if id, ok := ev["sessionID"].(string); ok && r.SessionID == "" {
			r.SessionID = id
		}
		if ev["type"] == "text" {
			if part, ok := ev["part"].(map[string]any); ok {
				if t, ok := part["text"].(string); ok {
					texts = append(texts, t)
				}
			}
		}
	}
	r.Text = strings.Join(texts, "\n")
	h.mu.Lock()
	h.runs = append(h.runs, r)
	h.mu.Unlock()
	return r
}

// PluginWarnings returns the lines the plugin logged (through OpenCode's
// log, as message="tasksessiond: ...") at WARN or ERROR, in every run so far.
func (h *Host) PluginWarnings() []string {
	b, _ := os.ReadFile(h.Logs)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, `message="tasksessiond: `) && (strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR")) {
			out = append(out, line)
		}
	}
	return out
}

// ToolPart is a tool call of a run, as its events report it.
type ToolPart struct {
	Tool      string
	CallID    string // the model's tool call id
	MessageID string // the assistant message that made the call
	SessionID string
	Status    string // completed, error
	Input     map[string]any
	Output    string // what the model was given (completed)
	Error     string // (error)
	Metadata  map[string]any
}

// Tools returns the run's tool calls of the named tool ("" for all), in order.
func (r Run) Tools(name string) []ToolPart {
	var out []ToolPart
	for _, ev := range r.Events {
		if ev["type"] != "tool_use" {
			continue
		}
		p, _ := ev["part"].(map[string]any)
		st, _ := p["state"].(map[string]any)
		tp := ToolPart{}
		tp.Tool, _ = p["tool"].(string)
		tp.CallID, _ = p["callID"].(string)
		tp.MessageID, _ = p["messageID"].(string)
		tp.SessionID, _ = p["sessionID"].(string)
		tp.Status, _ = st["status"].(string)
		tp.Input, _ = st["input"].(map[string]any)
		tp.Output, _ = st["output"].(string)
		tp.Error, _ = st["error"].(string)
		tp.Metadata, _ = st["metadata"].(map[string]any)
		if name == "" || tp.Tool == name {
			out = append(out, tp)
		}
	}
	return out
}

// Runs returns every run so far.
func (h *Host) Runs() []Run {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Run(nil), h.runs...)
}
