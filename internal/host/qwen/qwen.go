// Package qwen is everything tasksessiond knows about Qwen Code.
package qwen

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/hook"
	"github.com/tasksessiond/tasksessiond/internal/host"
)

func init() { host.Register(Host{}) }

// Host is Qwen Code.
type Host struct{}

var (
	_ host.Host    = Host{}
	_ host.Starter = Host{}
	_ host.Client  = Host{}
	_ host.Hooker  = Host{}
	_ host.Helper  = Host{}
	_ host.History = Host{}
)

// name is the host's name on the command line, and its processes' in a
// binding.
const name = "qwen"

// Name is the host's name on the command line.
func (Host) Name() string { return name }

// Title is the host's name for people.
func (Host) Title() string { return "Qwen Code" }

// envSession is set by Qwen Code for the MCP servers it starts: its
// session's id, the same on --resume. (Qwen Code is a Gemini CLI fork but
// sets no GEMINI_CLI.)
const envSession = "QWEN_CODE_SESSION_ID"

// Serves binds the bridge to the session Qwen Code names, created on
// first use (rebuilt from its chat record when that holds Task calls), and
// follows it through /clear by the binding its SessionStart hook records
// for the bridge's parent: Qwen Code keeps its MCP servers across /clear,
// whose new id their environment does not show.
func (Host) Serves(e host.Env) (host.Serving, bool) {
	id := e.Getenv(envSession)
	if id == "" {
		return host.Serving{}, false
	}
	return host.Serving{SessionID: id, Bound: host.ParentBinding(e, name), History: Host{}}, true
}

// IsClient reports whether the MCP client is Qwen Code
// ("qwen-cli-mcp-client-<server>").
func (Host) IsClient(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), "qwen-cli-mcp-client")
}

// Conversation is "": Qwen Code names no conversation in a call's _meta.
func (Host) Conversation(map[string]any) string { return "" }

// ResultBytes bounds a TaskList result under Qwen Code: it cuts a tool's
// output past 25,000 characters (DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD,
// 0.24.4), and the text is ASCII but for what the model wrote.
const ResultBytes = 24_000

// ResultBytes is the package's ResultBytes.
func (Host) ResultBytes() int { return ResultBytes }

// CallsBefore reads the Task calls of the chat record at path.
func (Host) CallsBefore(ctx context.Context, path, server string, _ map[string]any) ([]client.TranscriptCall, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil // a new session: nothing recorded yet
	}
	return Calls(ctx, path, server)
}

// Hook is "tasksessiond hook qwen", for SessionStart: Qwen Code's hooks
// get Claude Code's input (session_id, transcript_path, source startup,
// resume, clear or compact) and read its output. Qwen Code gives a hook
// no pid of its own; it runs it with bash -c and starts the MCP servers as
// its children, so the hook's nearest ancestor that is not a shell keys
// the binding.
func (h Host) Hook(ctx context.Context, cfg hook.Config, e host.Env, r io.Reader) (any, error) {
	in, err := hook.ReadInput(r, h.Title())
	if err != nil {
		return nil, err
	}
	cfg.History = History{}
	if pid := host.HookHostPID(e.Parent); pid > 0 {
		cfg.Bind = hook.BindTo(e.RuntimeDir, name, pid)
	}
	out, err := hook.Run(ctx, cfg, in)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Quiet is nothing: Qwen Code reads an empty stdout as nothing to add.
func (Host) Quiet() any { return nil }

// Help says what the bridge and the hook do under Qwen Code.
func (Host) Help(command string) string {
	switch command {
	case "mcp":
		return "its id ($" + envSession + "), followed through /clear\n    (the SessionStart hook tells the bridge the new id)"
	case "hook":
		return `"tasksessiond hook qwen" is Qwen Code's SessionStart hook, as above: its
input is Claude Code's, and a list is rebuilt from Qwen Code's chat record
(chats/<id>.jsonl) when the daemon has lost it.`
	}
	return ""
}
