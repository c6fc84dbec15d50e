// Package gemini is everything tasksessiond knows about Gemini CLI.
package gemini

import (
	"context"
	"io"

	"github.com/tasksessiond/tasksessiond/internal/hook"
	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/transcript"
)

func init() { host.Register(Host{}) }

// Host is Gemini CLI.
type Host struct{}

var (
	_ host.Host    = Host{}
	_ host.Starter = Host{}
	_ host.Hooker  = Host{}
	_ host.Helper  = Host{}
)

// name is the host's name on the command line, and its processes' in a
// binding.
const name = "gemini"

// Name is the host's name on the command line.
func (Host) Name() string { return name }

// Title is the host's name for people.
func (Host) Title() string { return "Gemini CLI" }

// envGeminiCLI is set to 1 by Gemini CLI for the MCP servers it starts.
const envGeminiCLI = "GEMINI_CLI"

// Serves follows the session the SessionStart hook last recorded for the
// bridge's parent, the Gemini CLI process. Its transcript (one JSON
// document) is no record a list could be rebuilt from.
func (Host) Serves(e host.Env) (host.Serving, bool) {
	if e.Getenv(envGeminiCLI) != "1" {
		return host.Serving{}, false
	}
	return host.Serving{Bound: host.ParentBinding(e, name)}, true
}

// envQwen is set by Qwen Code, a Gemini CLI fork that installs Gemini CLI
// extensions (ours too), for the hooks it runs: the session's id.
const envQwen = "QWEN_CODE_SESSION_ID"

// Hook is "tasksessiond hook gemini", for SessionStart and BeforeModel.
// Run by Qwen Code (the extension installed there), it is Qwen Code's own
// hook: Qwen Code's hooks and its bridge are not Gemini CLI's.
func (Host) Hook(ctx context.Context, cfg hook.Config, e host.Env, r io.Reader) (any, error) {
	if e.Getenv(envQwen) != "" {
		if q, ok := host.Lookup("qwen"); ok {
			if hk, ok := q.(host.Hooker); ok {
				return hk.Hook(ctx, cfg, e, r)
			}
		}
	}
	in, err := ReadGeminiInput(r)
	if err != nil {
		return nil, err
	}
	cfg.History = transcript.Reader{}
	if pid := GeminiHostPID(e.Parent); pid > 0 && in.HookEventName == "SessionStart" {
		cfg.Bind = BindGemini(e.RuntimeDir, pid)
	}
	return RunGemini(ctx, cfg, in)
}

// Quiet is an empty object: Gemini CLI takes a hook's stderr, when its
// stdout is empty, for its output, and would show a warning as a message.
func (Host) Quiet() any { return struct{}{} }

// Help says what the bridge and the hook do under Gemini CLI.
func (Host) Help(command string) string {
	switch command {
	case "mcp":
		return "the session its SessionStart hook last recorded for the\n    bridge's parent (under $" + envGeminiCLI + "=1)"
	case "hook":
		return `"tasksessiond hook gemini" is Gemini CLI's hook, for SessionStart (as above;
the binding is keyed by the Gemini CLI process) and BeforeModel: a request
whose history was compressed gets the list appended to the summary.`
	}
	return ""
}
