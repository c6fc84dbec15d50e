package host

import (
	"context"
	"io"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/binding"
	"github.com/tasksessiond/tasksessiond/internal/hook"
)

// What a host is to the bridge ("tasksessiond mcp") and the hook command
// ("tasksessiond hook NAME"): each a small interface a host implements
// when it has that part, which the commands find with a type assertion.

// Env is what a bridge or a hook sees of the host process that started it.
type Env struct {
	Getenv func(string) string // its environment
	Parent int                 // its parent's pid
	// RuntimeDir is the daemon's runtime directory (the socket's), where
	// bindings are kept.
	RuntimeDir string
}

// Serving is how a bridge finds the conversation it serves.
type Serving struct {
	// SessionID is the conversation the host named at start, created on
	// first use ("": none named).
	SessionID string
	// Bound, when set, is asked before each call which conversation the
	// host is in now (its hook records it: /clear and a fork change it
	// under one bridge).
	Bound func() binding.Conversation
	// History reads the host's own record of a conversation (the
	// transcript a binding names), from which a conversation the daemon
	// does not know yet is rebuilt; nil when it keeps none to rebuild from.
	History History
	// Transcript, when set, names where the host keeps the history of
	// conversation id, for a host that names it to no hook the bridge
	// hears from.
	Transcript func(id string) string
}

// History is a host's own record of its conversations, from which the
// bridge rebuilds a list the daemon does not know (a fork's).
type History interface {
	// CallsBefore returns the Task calls of the conversation whose
	// history is at path (those of the MCP server named server), in the
	// order made, before the call whose MCP _meta is meta: once the host
	// has written them, which it may do only after it made that call.
	CallsBefore(ctx context.Context, path, server string, meta map[string]any) ([]client.TranscriptCall, error)
}

// Starter is a host that starts the bridge in an environment that shows it.
type Starter interface {
	// Serves reports whether this host started a bridge that sees e, and
	// how that bridge finds its conversation.
	Serves(e Env) (Serving, bool)
}

// Client is a host the bridge recognises by what its MCP client sends:
// its name at initialize, or the conversation a call's _meta names.
type Client interface {
	// IsClient reports whether the MCP client called name is this host.
	IsClient(name string) bool
	// Conversation returns the conversation a call's _meta names ("":
	// none), the one that call goes to.
	Conversation(meta map[string]any) string
	// ResultBytes bounds a TaskList result the host shows its model, in
	// bytes of its structured JSON (0: the daemon's own bound).
	ResultBytes() int
}

// Hooker is a host whose hook is "tasksessiond hook NAME".
type Hooker interface {
	// Hook reads the event the host wrote to in and does what the hook
	// does for it, with cfg (the command's flags, a dial, a warning
	// sink), filled in with the host's own budget, names and history. It
	// returns what to print; an error wrapping hook.ErrNothing is no
	// failure, and one that is a *hook.InputError came from reading in.
	Hook(ctx context.Context, cfg hook.Config, e Env, in io.Reader) (any, error)
	// Quiet is what the hook prints when it has nothing to add, or fails
	// (nil: nothing).
	Quiet() any
}

// ParentBinding follows the host process the bridge serves, its parent,
// through the conversations its SessionStart hook records under the
// host's name (startup, resume, /clear and a fork each name the list's
// session); nil when the bridge has no parent to follow.
func ParentBinding(e Env, host string) func() binding.Conversation {
	if e.Parent <= 1 {
		return nil
	}
	k := binding.KeyOf(host, e.Parent)
	return func() binding.Conversation { return binding.Read(e.RuntimeDir, k) }
}

// Helper is a host that says, for a command's help ("mcp", "hook"), what
// that command does under it ("": nothing particular).
type Helper interface {
	Help(command string) string
}

// Started returns how a bridge that sees e finds its conversation: the
// first registered Starter's, by name, that says it started the bridge.
func Started(e Env) (Serving, bool) {
	for _, h := range All() {
		if st, ok := h.(Starter); ok {
			if s, ok := st.Serves(e); ok {
				return s, true
			}
		}
	}
	return Serving{}, false
}

// Clients returns every registered host the bridge recognises by what
// its MCP client sends, by name.
func Clients() []Client {
	var cs []Client
	for _, h := range All() {
		if c, ok := h.(Client); ok {
			cs = append(cs, c)
		}
	}
	return cs
}
