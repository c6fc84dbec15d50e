// Package copilot drives the real GitHub Copilot CLI ("copilot -p")
// offline (COPILOT_OFFLINE, COPILOT_PROVIDER_BASE_URL) against a scripted
// OpenAI chat completions API (e2e/modelapi) and a tasksessiond daemon:
// the MCP server "tasks" running "tasksessiond mcp" in
// ~/.copilot/mcp-config.json, and the hook "tasksessiond hook copilot" in
// ~/.copilot/hooks/. Each Host has its own HOME, so tests run in parallel
// and never read the user's configuration.
package copilot

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// Version is the Copilot CLI release these tests pin; e2e/install-hosts.sh
// installs it.
const Version = "1.0.102"

// EnvBinary overrides where the copilot binary is looked for.
const EnvBinary = "TASKSESSIOND_E2E_COPILOT"

// CLI is the pinned Copilot CLI, for harness.RequireHost.
var CLI = harness.CLI{Name: "GitHub Copilot CLI", Install: "copilot", Version: Version, Bin: "copilot", Env: EnvBinary}

// Model is the model the CLI is told to use (one it knows the limits of).
const Model = "gpt-4.1"

// Server is the MCP server's name in mcp-config.json; Copilot CLI offers
// its tools to the model as tasks-TaskCreate and so on.
const Server = "tasks"

// Tool names as the model sees them.
const (
	TaskCreate = Server + "-TaskCreate"
	TaskList   = Server + "-TaskList"
	TaskGet    = Server + "-TaskGet"
	TaskUpdate = Server + "-TaskUpdate"
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
	// NoSetup leaves "tasksessiond setup copilot" out: the test runs it.
	NoSetup bool
	// MaxPromptTokens, when set, is the model's prompt limit
	// (COPILOT_PROVIDER_MAX_PROMPT_TOKENS): a small one makes it compact.
	MaxPromptTokens int
	// Noisy allows the bridge and the hook to write to stderr.
	Noisy bool
}

// Host is one isolated Copilot CLI installation: HOME holds .copilot
// (mcp-config.json, hooks/, session-state/<id>/events.jsonl).
type Host struct {
	*harness.Host
	CopilotHome string
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
	h.CopilotHome = filepath.Join(h.Home, ".copilot")
	h.Mkdir(h.CopilotHome)
	h.Vars = []string{
		"COPILOT_OFFLINE=true",
		"COPILOT_PROVIDER_BASE_URL=" + h.API.URL + "/v1",
		"COPILOT_PROVIDER_API_KEY=sk-e2e-dummy-key",
		"COPILOT_MODEL=" + Model,
		"COPILOT_AUTO_UPDATE=false",
		// Copilot CLI unpacks its package (about 200 MB) into its cache
		// on first run: one cache for every test, not one per HOME.
		"XDG_CACHE_HOME=" + filepath.Join(harness.CacheDir(), "copilot-xdg-cache"),
		"NO_COLOR=1",
	}
	if opts.MaxPromptTokens > 0 {
		h.Vars = append(h.Vars, "COPILOT_PROVIDER_MAX_PROMPT_TOKENS="+itoa(opts.MaxPromptTokens))
	}
	h.Record(harness.Recording{Vars: []string{"COPILOT_AGENT_SESSION_ID"}})
	if !opts.NoSetup {
		var flags []string
		if opts.NoHook {
			flags = append(flags, "--no-hook")
		}
		h.Setup(tb, "copilot", flags...)
	}
	return h
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// Result is what "copilot -p --output-format json" reported.
type Result struct {
	SessionID string            // the session's id
	Events    []json.RawMessage // every JSONL event
	Stdout    string
	Stderr    string
}

// Run runs "copilot -p PROMPT" (a new session, or what flags say:
// --resume ID), and fails the test unless it exits 0.
func (h *Host) Run(tb testing.TB, prompt string, flags ...string) Result {
	tb.Helper()
	return h.RunFor(tb, 180*time.Second, prompt, flags...)
}

// RunFor is Run within timeout.
func (h *Host) RunFor(tb testing.TB, timeout time.Duration, prompt string, flags ...string) Result {
	tb.Helper()
	out := h.Command(tb, timeout, h.Args(prompt, flags...)...)
	res := h.result(out)
	if out.Err != nil {
		tb.Fatalf("copilot: %v\nstdout:\n%s\nstderr:\n%s", out.Err, harness.Tail(res.Stdout, 80), harness.Tail(res.Stderr, 80))
	}
	return res
}

// Args are the command line of a run of prompt.
func (h *Host) Args(prompt string, flags ...string) []string {
	args := append([]string{"--allow-all-tools", "--output-format", "json", "--no-auto-update"}, flags...)
	return append(args, "-p", prompt)
}

func (h *Host) result(out harness.Output) Result {
	res := Result{Stdout: out.Stdout, Stderr: out.Stderr}
	for _, line := range harness.JSONLines(res.Stdout) {
		res.Events = append(res.Events, line)
		var e struct {
			SessionID string `json:"sessionId"`
			Data      struct {
				SessionID string `json:"sessionId"`
			} `json:"data"`
		}
		if json.Unmarshal(line, &e) == nil && res.SessionID == "" {
			res.SessionID = e.SessionID
			if res.SessionID == "" {
				res.SessionID = e.Data.SessionID
			}
		}
	}
	return res
}

// CompactionDone is the type of the event Copilot CLI records in
// events.jsonl once a compaction has replaced the history.
const CompactionDone = "session.compaction_complete"

// Compact runs "copilot --resume ID -p /compact" until Copilot CLI has
// recorded that the compaction completed (CompactionDone), and stops it
// if it has not exited by itself by then: it sometimes goes on spinning
// for a minute after it has finished.
func (h *Host) Compact(tb testing.TB, id string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	before := strings.Count(h.ReadEvents(id), `"type":"`+CompactionDone+`"`)
	cmd := exec.CommandContext(ctx, h.Bin, h.Args("/compact", "--resume", id)...)
	cmd.Dir, cmd.Env = h.Project, h.Env()
	cmd.WaitDelay = 5 * time.Second
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	harness.WaitFor(tb, 110*time.Second, "Copilot CLI's record that the compaction completed", func() bool {
		return strings.Count(h.ReadEvents(id), `"type":"`+CompactionDone+`"`) > before
	})
	select {
	case err := <-exited:
		tb.Logf("copilot -p /compact: exited by itself (%v)", err)
	default:
		cancel() // done, and still running: stopped
		<-exited
		tb.Logf("copilot -p /compact: stopped after its compaction completed")
	}
}

// Hooks returns the hook's runs so far, in order (of one event, as the
// input names it: sessionStart, preCompact, ...; "" for all).
func (h *Host) Hooks(event string) []HookRun {
	var out []HookRun
	for _, r := range h.Rec.Hooks() {
		var in struct {
			Event     string `json:"hookEventName"`
			SessionID string `json:"sessionId"`
			Source    string `json:"source"`
		}
		json.Unmarshal([]byte(r.Input), &in)
		hr := HookRun{HookRun: r}
		if in.SessionID != "" {
			hr.SessionID = in.SessionID
		}
		if in.Source != "" {
			hr.Source = in.Source
		}
		if event == "" || strings.EqualFold(hr.Event, event) || strings.Contains(r.Input, `"`+event+`"`) {
			out = append(out, hr)
		}
	}
	return out
}

// HookRun is one run of the hook.
type HookRun struct {
	harness.HookRun
}

// Events is the session's events.jsonl (Copilot CLI's record of it).
func (h *Host) EventsFile(id string) string {
	return filepath.Join(h.CopilotHome, "session-state", id, "events.jsonl")
}

// ReadEvents returns the session's events.jsonl ("" when there is none).
func (h *Host) ReadEvents(id string) string {
	b, _ := os.ReadFile(h.EventsFile(id))
	return string(b)
}
