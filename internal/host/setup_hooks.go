package host

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// The hooks of Claude Code, Codex CLI and Gemini CLI share one shape:
// {"hooks": {EVENT: [{"matcher": ..., "hooks": [{"type": "command",
// "command": ...}]}]}}. A group of setup's holds one hook, tasksessiond's.

// Group is a group of hooks as setup writes it: one command hook, with no
// matcher (every source: startup, resume, clear, compact, fork).
type Group struct {
	Hooks []Hook `json:"hooks"`
}

// Hook is a command hook; Name is Gemini CLI's.
type Hook struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Name    string `json:"name,omitempty"`
}

// HookGroup is a group of one command hook.
func HookGroup(command, name string) Group {
	return Group{Hooks: []Hook{{Type: "command", Command: command, Name: name}}}
}

// Server is an MCP server's entry as setup writes it (Claude Code's
// "type", Gemini CLI's "trust", Copilot CLI's "tools").
type Server struct {
	Type    string         `json:"type,omitempty"`
	Command string         `json:"command"`
	Args    []string       `json:"args"`
	Env     map[string]any `json:"env,omitempty"`
	Trust   bool           `json:"trust,omitempty"`
	Tools   []string       `json:"tools,omitempty"`
}

// hookGroup is a group as the hosts write it.
type hookGroup struct {
	Matcher *string `json:"matcher"`
	Hooks   []struct {
		Type    string `json:"type"`
		Command string `json:"command"`
	} `json:"hooks"`
}

// ours reports whether every hook of a group runs "tasksessiond hook NAME".
func (g hookGroup) ours(bin, name string) bool {
	if len(g.Hooks) == 0 {
		return false
	}
	for _, h := range g.Hooks {
		if !RunsTasksessiond(Words(h.Command), bin, "hook", name) {
			return false
		}
	}
	return true
}

// ownHook makes the hooks at e.Path (["hooks", EVENT]) hold setup's group
// e.Value: a group of setup's that differs from it (an old binary's path,
// other arguments, a matcher that leaves out a source) is replaced where
// it is (a host may key the hook's trust by its index). Uninstalling, or
// with --no-hook, it takes setup's groups out.
func (p *Plan) ownHook(d *config.Doc, file string, e Entry, known bool) error {
	event, ours := e.Path[len(e.Path)-1], ourGroup(p.o.Bin, p.Host.Name())
	if p.o.Uninstall || p.o.NoHook {
		if d.RemoveIf(e.Path, p.had(file, e.Path, known), ours) > 0 {
			p.Step("remove the %s hook from %s", event, e.File)
		}
		return nil
	}
	group, before := e.Value.(Group), raw(d, e.Path)
	if d.ReplaceFirst(e.Path, ours, group) > 0 {
		if raw(d, e.Path) != before {
			p.Step("replace the stale %s hook in %s", event, e.File)
		}
		return nil
	}
	p.made(file, d, e.Path)
	p.Step("add the %s hook (%s) to %s", event, group.Hooks[0].Command, e.File)
	return d.Append(e.Path, group)
}

// ourGroup reports whether a group's bytes are setup's: every hook runs
// "tasksessiond hook NAME".
func ourGroup(bin, name string) func(raw []byte) bool {
	return func(raw []byte) bool {
		var g hookGroup
		return json.Unmarshal(raw, &g) == nil && g.ours(bin, name)
	}
}

// HookIndexes returns the indexes of setup's groups (every hook runs
// "tasksessiond hook NAME") in event's hooks.
func HookIndexes(doc *config.Doc, event, bin, name string) []int {
	var out []int
	var groups []json.RawMessage
	doc.Get([]string{"hooks", event}, &groups)
	for i, raw := range groups {
		if ourGroup(bin, name)(raw) {
			out = append(out, i)
		}
	}
	return out
}

// SetupsServer reports whether an MCP server's entry is one setup wrote:
// it runs tasksessiond mcp with only the arguments setup gives (MCPArgs),
// and has no member but the ones setup writes (members) and environment
// but the daemon's. Another, even one running tasksessiond mcp (the
// user's own, bound to a session of theirs), is the user's.
func SetupsServer(entry map[string]any, bin string, members ...string) bool {
	words := commandLine(entry["command"], toStrings(entry["args"]))
	if !RunsTasksessiond(words, bin, "mcp") {
		return false
	}
	for k := range entry {
		if k != "command" && k != "args" && k != "env" && !slices.Contains(members, k) {
			return false
		}
	}
	env, _ := entry["env"].(map[string]any)
	for k := range env {
		if k != "TASKSESSIOND_SOCKET" && k != "TASKSESSIOND_DB" {
			return false
		}
	}
	args := words[2:]
	for len(args) > 0 {
		switch {
		case len(args) >= 2 && (args[0] == "--socket" || args[0] == "--db"):
			args = args[2:]
		case len(args) >= 3 && args[0] == "--session" && args[2] == "--create":
			args = args[3:]
		default:
			return false
		}
	}
	return true
}

// members are the members setup writes in a server beside its command,
// args and env: the host's shape (Claude Code's type, Gemini CLI's trust,
// Copilot CLI's type and tools).
func (s Server) members() []string {
	b, _ := json.Marshal(s)
	var m map[string]any
	json.Unmarshal(b, &m)
	var out []string
	for k := range m {
		if k != "command" && k != "args" && k != "env" {
			out = append(out, k)
		}
	}
	return out
}

// ownServer makes the MCP server at e.Path (["mcpServers", "tasks"]) hold
// e.Value; a server of the user's there is refused by name. Uninstalling,
// it deletes it when setup wrote it.
func (p *Plan) ownServer(d *config.Doc, file string, e Entry, known bool) error {
	path, name, want := e.Path, e.Path[len(e.Path)-1], e.Value.(Server)
	var old map[string]any
	there := d.Get(path, &old)
	runs := commandLine(old["command"], toStrings(old["args"]))
	setups := there && SetupsServer(old, p.o.Bin, want.members()...)
	switch {
	case p.o.Uninstall && setups:
		d.Delete(path, p.had(file, path, known))
		p.Step("remove the MCP server %q from %s", name, e.File)
	case p.o.Uninstall && there && known && p.had(file, path, known) < len(path) && !RunsTasksessiond(runs, p.o.Bin, "mcp"):
		p.Note("the MCP server %q in %s, which setup added, runs %s now: left; run uninstall with the --bin setup was given", name, e.File, Command(runs...))
	case p.o.Uninstall:
	case there && !setups:
		return fmt.Errorf("%s is a server of yours (it runs %s), not one setup wrote: setup leaves it; rename or remove it, then run setup again", strings.Join(path, "."), Command(runs...))
	default:
		before := raw(d, path)
		p.made(file, d, path)
		if err := d.Set(path, want); err != nil {
			return err
		}
		switch {
		case raw(d, path) == before:
		case there:
			p.Step("replace the MCP server %q in %s (it ran %v %v)", name, e.File, old["command"], old["args"])
		default:
			p.Step("add the MCP server %q (%s) to %s", name, Command(append([]string{want.Command}, want.Args...)...), e.File)
		}
	}
	return nil
}

// OtherServers returns the names of the servers in the object at path
// that run tasksessiond mcp, other than name.
func OtherServers(doc *config.Doc, path []string, name, bin string) []string {
	var servers map[string]struct {
		Command any      `json:"command"`
		Args    []string `json:"args"`
	}
	doc.Get(path, &servers)
	var out []string
	for _, n := range doc.Members(path) {
		s := servers[n]
		if n != name && RunsTasksessiond(commandLine(s.Command, s.Args), bin, "mcp") {
			out = append(out, n)
		}
	}
	return out
}

// raw is the value at path in doc as it is written ("" when there is
// none): what an edit there changed, without the whole file's bytes.
func raw(doc *config.Doc, path []string) string {
	var r json.RawMessage
	doc.Get(path, &r)
	return string(r)
}

// commandLine is a server's command (a string, or OpenCode's array) and
// its arguments, as words.
func commandLine(command any, args []string) []string {
	var words []string
	switch c := command.(type) {
	case string:
		words = []string{c}
	case []any:
		words = toStrings(c)
	}
	return append(words, args...)
}

func toStrings(v any) []string {
	var out []string
	switch v := v.(type) {
	case []string:
		return v
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}
