// Package codex is everything tasksessiond knows about Codex CLI.
package codex

import (
	"context"
	"io"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/hook"
	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/transcript"
)

func init() { host.Register(Host{}) }

// Host is Codex CLI.
type Host struct{}

var (
	_ host.Host   = Host{}
	_ host.Client = Host{}
	_ host.Hooker = Host{}
	_ host.Helper = Host{}
)

// Name is the host's name on the command line.
func (Host) Name() string { return "codex" }

// Title is the host's name for people.
func (Host) Title() string { return "Codex CLI" }

// ResultBytes bounds a TaskList result under Codex CLI, in bytes of
// its text (what the bridge sends and Codex shows the model). Codex cuts a tool's
// output in the middle past its model's truncation policy: 10,000 bytes
// for a model outside its catalog (codex-rs models-manager,
// model_info_from_slug: TruncationPolicyConfig::bytes(10_000)), any custom
// provider's model; the rest of the 10,000 is for the "Wall time ...
// Output:" lines Codex puts before it.
const ResultBytes = 9_500

// IsClient reports whether the MCP client is Codex CLI ("codex-mcp-client").
func (Host) IsClient(name string) bool {
	return strings.Contains(strings.ToLower(name), "codex")
}

// Conversation returns the conversation a call's _meta names: Codex CLI
// sends its thread id as threadId (and sessionId, the same), stable across
// resume and compaction.
func (Host) Conversation(meta map[string]any) string {
	for _, k := range []string{"threadId", "sessionId"} {
		if id, ok := meta[k].(string); ok && id != "" && len(id) <= 256 {
			return id
		}
	}
	return ""
}

// ResultBytes is the package's ResultBytes.
func (Host) ResultBytes() int { return ResultBytes }

// Hook is "tasksessiond hook codex": Codex CLI's hooks get Claude Code's
// JSON (session_id is the thread id, which the bridge binds each call to),
// and Codex keeps 10,000 bytes of what a hook adds, not characters.
func (h Host) Hook(ctx context.Context, cfg hook.Config, e host.Env, r io.Reader) (any, error) {
	in, err := hook.ReadInput(r, h.Title())
	if err != nil {
		return nil, err
	}
	cfg.History = transcript.Reader{}
	cfg.Measure = func(s string) int { return len(s) } // Codex counts UTF-8 bytes
	out, err := hook.Run(ctx, cfg, in)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Quiet is nothing: Codex reads an empty stdout as nothing to add.
func (Host) Quiet() any { return nil }

// Help says what the bridge and the hook do under Codex CLI.
func (Host) Help(command string) string {
	switch command {
	case "mcp":
		return "the thread each call's _meta names (threadId)"
	case "hook":
		return `"tasksessiond hook codex" does the same for Codex CLI, whose hooks get the
same JSON (session_id is the thread id, which the bridge binds each call to);
what it adds is fitted in bytes, as Codex counts it.`
	}
	return ""
}
