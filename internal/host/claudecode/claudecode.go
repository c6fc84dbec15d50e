// Package claudecode is everything tasksessiond knows about Claude Code.
package claudecode

import (
	"context"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/hook"
	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/transcript"
)

func init() { host.Register(Host{}) }

// Host is Claude Code.
type Host struct{}

var (
	_ host.Host    = Host{}
	_ host.Starter = Host{}
	_ host.Hooker  = Host{}
	_ host.Helper  = Host{}
	_ host.History = Host{}
)

// name is the host's name on the command line, and its processes' in a
// binding.
const name = "claude-code"

// Name is the host's name on the command line.
func (Host) Name() string { return name }

// Title is the host's name for people.
func (Host) Title() string { return "Claude Code" }

// envSession is set by Claude Code for the MCP servers it starts, and
// stays the same across --resume and compaction: bound to it, the list
// follows the Claude Code session.
const envSession = "CLAUDE_CODE_SESSION_ID"

// envPID is Claude Code's pid, set for the hooks and MCP servers it
// starts: the key that ties a hook's conversation id to the bridge.
const envPID = "CLAUDE_PID"

// Serves binds the bridge to the conversation Claude Code names, created
// on first use, and follows it through /clear and forks by the binding
// its SessionStart hook records for the bridge's parent. Claude Code gives
// its hooks its pid as CLAUDE_PID but not its MCP servers, which it starts
// as its direct children: the parent is the key. A CLAUDE_PID the bridge
// sees was inherited (a Claude Code run inside another's shell has the
// outer one's), so it is not trusted: keyed by it, the inner
// conversation's calls would go to the outer one's list.
func (Host) Serves(e host.Env) (host.Serving, bool) {
	id := e.Getenv(envSession)
	if id == "" {
		return host.Serving{}, false
	}
	return host.Serving{SessionID: id, Bound: host.ParentBinding(e, name), History: Host{}}, true
}

// toolUseKey names, in a tools/call's _meta, the model's tool_use that
// the call answers.
const toolUseKey = "claudecode/toolUseId"

// flushWait bounds how long a bridge's first call in a conversation the
// daemon does not know waits for Claude Code to write the transcript up
// to that call.
const flushWait = 5 * time.Second

// CallsBefore reads the Task calls of the transcript at path once it
// holds the call meta names. Claude Code writes a transcript behind the
// conversation, a fork's copy of its source's history too: a fork's first
// call can reach the bridge before any of it is on disk, and a list
// rebuilt then would start empty for good. The call's own tool_use is
// written after everything before it, so once it is there the history is.
// Without it (no id, or never written within flushWait) the transcript is
// read as it is.
func (Host) CallsBefore(ctx context.Context, path, server string, meta map[string]any) ([]client.TranscriptCall, error) {
	if id, ok := meta[toolUseKey].(string); ok && id != "" {
		written(ctx, path, id, flushWait)
	}
	return transcript.Calls(ctx, path, server)
}

// written waits, at most wait, until the transcript at path holds s.
func written(ctx context.Context, path, s string, wait time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if transcript.Holds(ctx, path, s) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// envCopilot is set to 1 by GitHub Copilot CLI for the hooks it runs. It
// loads Claude Code plugins, ours too, and runs the plugin's SessionStart
// hook with Claude Code's input (source "new" for a new session), but
// shows the model the plugin's tools as <server>-<tool> and reads the
// context a hook adds at its output's top level.
const envCopilot = "COPILOT_CLI"

// copilotOutput is what Copilot CLI reads of a SessionStart hook.
type copilotOutput struct {
	AdditionalContext string `json:"additionalContext"`
}

// Hook is "tasksessiond hook claude-code", for SessionStart.
func (h Host) Hook(ctx context.Context, cfg hook.Config, e host.Env, r io.Reader) (any, error) {
	in, err := hook.ReadInput(r, h.Title())
	if err != nil {
		return nil, err
	}
	if e.Getenv(envCopilot) == "1" {
		return copilotHook(ctx, cfg, in)
	}
	cfg.History = transcript.Reader{}
	if pid, err := strconv.Atoi(e.Getenv(envPID)); err == nil && pid > 0 {
		cfg.Bind = hook.BindTo(e.RuntimeDir, name, pid)
	}
	out, err := hook.Run(ctx, cfg, in)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// copilotHook is the plugin's SessionStart hook as Copilot CLI runs it.
func copilotHook(ctx context.Context, cfg hook.Config, in hook.Input) (any, error) {
	server := cfg.Server
	if server == "" {
		server = "tasks"
	}
	// Claude Code's name for a plugin's server is plugin_<plugin>_<server>
	// (the --server the plugin gives); Copilot CLI's is <server>.
	if rest, ok := strings.CutPrefix(server, "plugin_"); ok {
		server = rest[strings.LastIndex(rest, "_")+1:]
	}
	cfg.ToolPrefix = server + "-"
	if in.Source == "new" {
		in.Source = "startup"
	}
	out, err := hook.Run(ctx, cfg, in)
	if err != nil {
		return nil, err
	}
	return copilotOutput{AdditionalContext: out.HookSpecificOutput.AdditionalContext}, nil
}

// Quiet is nothing: Claude Code reads an empty stdout as nothing to add.
func (Host) Quiet() any { return nil }

// Help says what the bridge and the hook do under Claude Code.
func (Host) Help(command string) string {
	switch command {
	case "mcp":
		return "its id ($" + envSession + "), followed through /clear and forks\n    (the SessionStart hook tells the bridge the new id)"
	case "hook":
		return `"tasksessiond hook claude-code" is Claude Code's hook for SessionStart, as
above. Every source records the conversation's id for the MCP bridge of the
same Claude Code process, which serves that list from then on (this is how
/clear and a fork switch lists). In ~/.claude/settings.json:
  {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "tasksessiond hook claude-code"}]}]}}`
	}
	return ""
}
