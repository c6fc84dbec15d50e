package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

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

// Group is a group of hooks as Claude Code, Codex CLI and Gemini CLI
// write it; setup's holds one command hook and no matcher (every source).
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

// OurGroup reports whether a group's bytes are setup's: every hook runs
// "tasksessiond hook NAME".
func OurGroup(bin, name string) func(raw []byte) bool {
	return func(raw []byte) bool {
		var g Group
		ours := json.Unmarshal(raw, &g) == nil && len(g.Hooks) > 0
		for _, h := range g.Hooks {
			ours = ours && RunsTasksessiond(Words(h.Command), bin, "hook", name)
		}
		return ours
	}
}

// SetupsServer reports whether an MCP server's entry is one setup wrote:
// tasksessiond mcp with only setup's arguments, members and environment.
// Another, even one running tasksessiond mcp (bound to a session of the
// user's), is the user's.
func SetupsServer(entry map[string]any, bin string, members ...string) bool {
	words := serverWords(entry)
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
	for args := words[2:]; len(args) > 0; {
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

// serverWords is a server's command (a string, or an array) and arguments.
func serverWords(s map[string]any) []string {
	var words []string
	for _, v := range []any{s["command"], s["args"]} {
		switch v := v.(type) {
		case string:
			words = append(words, v)
		case []any:
			for _, x := range v {
				if x, ok := x.(string); ok {
					words = append(words, x)
				}
			}
		}
	}
	return words
}

// yours is the error for a server of the user's where setup puts its own.
func yours(path []string, server map[string]any) error {
	return fmt.Errorf("%s is a server of yours (it runs %s), not one setup wrote: setup leaves it; rename or remove it, then run setup again", strings.Join(path, "."), Command(serverWords(server)...))
}

// ownServer sets setup's MCP server at e.Path or, uninstalling, deletes it.
func (f *jsonFile) ownServer(e Entry) error {
	path, name, want := e.Path, e.Path[len(e.Path)-1], e.Value.(Server)
	var m map[string]any // what setup writes
	b, _ := json.Marshal(want)
	json.Unmarshal(b, &m)
	members := slices.Collect(maps.Keys(m))
	var old map[string]any
	there := f.d.Get(path, &old)
	setups := there && SetupsServer(old, f.o.Bin, members...)
	f.setUp = f.setUp || setups
	// A server like setup's that setup did not add is the user's own
	// (the host's "mcp add", or by hand): setup takes it over, recording
	// it as they wrote it, and uninstall gives it back.
	i := f.rec.find(f.file, path, "")
	var yoursWas *string
	if i >= 0 {
		yoursWas = f.rec[i].Was
	}
	added := i >= 0 && yoursWas == nil
	switch {
	case f.o.Uninstall && setups && yoursWas != nil:
		f.d.SetRaw(path, []byte(*yoursWas))
		f.Step("set the MCP server %q in %s back to yours", name, e.File)
	case f.o.Uninstall && setups:
		f.d.Delete(path, f.keep(path))
		f.Step("remove the MCP server %q from %s", name, e.File)
	case f.o.Uninstall && there && added && !RunsTasksessiond(serverWords(old), f.o.Bin, "mcp"):
		f.Note("the MCP server %q in %s, which setup added, runs %s now: left; run uninstall with the --bin setup was given", name, e.File, Command(serverWords(old)...))
	case f.o.Uninstall && there && added:
		f.Note("the MCP server %q in %s, which setup added, has been changed since (it runs %s, with %s): left as yours; remove it yourself if you want it gone", name, e.File, Command(serverWords(old)...), raw(f.d, path))
	case f.o.Uninstall:
	case there && !setups:
		return yours(path, old)
	default:
		before := raw(f.d, path)
		if there && i < 0 {
			was := string(f.d.Raw(path))
			f.first(Edit{File: f.file, Path: path, Was: &was})
		}
		f.made(path)
		if err := f.d.Set(path, want); err != nil {
			return err
		}
		if !there {
			f.Step("add the MCP server %q (%s) to %s", name, Command(append([]string{want.Command}, want.Args...)...), e.File)
		} else if raw(f.d, path) != before {
			f.Step("replace the MCP server %q in %s (it ran %s)", name, e.File, Command(serverWords(old)...))
		}
	}
	return nil
}

// ownHook adds setup's group to the hooks at e.Path, or replaces a stale
// one of setup's where it is (Codex keys a hook's trust by its index);
// uninstalling, or with --no-hook, it takes setup's groups out. Which are
// setup's the record says (hookLine): a group that runs the hook and that
// setup did not add is the user's (written by hand, as HOSTS.md says), set
// up already when it is the group setup would write, else refused. With
// no record at all (lost), setup's are known by what they run, as before
// the record named them: a group with setup's arguments is a stale one of
// setup's, and uninstall takes out each that runs the hook.
func (f *jsonFile) ownHook(e Entry) error {
	event, runs := e.Path[len(e.Path)-1], OurGroup(f.o.Bin, f.Host.Name())
	group, before, lost := e.Value.(Group), raw(f.d, e.Path), f.recOld == nil
	i := f.rec.hookLine(f.file, e.Path)
	recorded := i >= 0
	if recorded {
		f.rec = slices.Delete(f.rec, i, i+1) // recorded again while setup's is there
	}
	// What setup appended is a group, no string the array holds: its line
	// has the command of the group's hook in Added, which says what it
	// ran; one line a hook path, for setup keeps one group there.
	line := Edit{File: f.file, Path: e.Path, Added: group.Hooks[0].Command}
	var groups []json.RawMessage
	f.d.Get(e.Path, &groups)
	if f.o.Uninstall || f.o.NoHook {
		switch {
		case recorded || lost:
			if f.d.RemoveIf(e.Path, f.keep(e.Path), runs) > 0 {
				f.setUp = true
				f.Step("remove the %s hook from %s", event, e.File)
			}
			if recorded && f.runsAnyBin(e.Path) {
				f.rec = append(f.rec, line) // setup's, with another --bin: for the uninstall with that one
			}
		case f.o.Uninstall && slices.ContainsFunc(groups, func(g json.RawMessage) bool { return runs(g) }):
			f.Note("the %s hook in %s is yours (setup's record does not say setup added it): left", event, e.File)
		}
		return nil
	}
	if !recorded && slices.ContainsFunc(groups, func(g json.RawMessage) bool { return sameGroup(g, group) }) {
		return nil // the user's, as setup would write it: set up already
	}
	stale := runs
	if !recorded {
		stale = func(raw []byte) bool { return lost && runs(raw) && sameArgs(raw, group) }
	}
	if f.d.ReplaceFirst(e.Path, stale, group) > 0 {
		f.setUp = true
		f.rec = append(f.rec, line)
		if raw(f.d, e.Path) != before {
			f.Step("replace the stale %s hook in %s", event, e.File)
		}
		return nil
	}
	for i, g := range groups {
		var hooks Group
		json.Unmarshal(g, &hooks)
		for _, h := range hooks.Hooks {
			switch {
			case !RunsTasksessiond(Words(h.Command), f.o.Bin, "hook", f.Host.Name()):
			case len(hooks.Hooks) == 1:
				return fmt.Errorf("%s[%d] is a group of your hooks that runs %s, not as setup's would (%s): setup leaves it; take it out (or set up with --no-hook), then run setup again", strings.Join(e.Path, "."), i, h.Command, group.Hooks[0].Command)
			default:
				// beside their own: setup's would run the hook twice,
				// the list twice in the model's context
				return fmt.Errorf("%s[%d] is a group of your hooks that runs %s beside hooks of your own: setup's would run it a second time; take it out of that group (or set up with --no-hook), then run setup again", strings.Join(e.Path, "."), i, h.Command)
			}
		}
	}
	f.made(e.Path)
	f.rec = append(f.rec, line)
	f.Step("add the %s hook (%s) to %s", event, group.Hooks[0].Command, e.File)
	return f.d.Append(e.Path, group)
}

// hookLine is the index of the record's line of the group setup appended
// to the hooks at path in file (its record key), or -1.
func (r Record) hookLine(file string, path []string) int {
	return slices.IndexFunc(r, func(e Edit) bool { return e.File == file && slices.Equal(e.Path, path) && e.Added != "" })
}

// SetupsGroups reports which groups of the hooks at path in file are
// setup's, by its record as it stands (before the plan, or after it): each
// that runs the hook where the record names a group setup appended there,
// or where it is lost and setup takes its own out; none else.
func (p *Plan) SetupsGroups(file string, path []string) func(raw []byte) bool {
	if p.rec.hookLine(recordKey(file), path) >= 0 || p.recOld == nil && (p.o.Uninstall || p.o.NoHook) {
		return OurGroup(p.o.Bin, p.Host.Name())
	}
	return func([]byte) bool { return false }
}

// runsAnyBin reports whether a group at path runs the hook with any
// --bin (setup's, given another --bin than this uninstall's).
func (f *jsonFile) runsAnyBin(path []string) bool {
	var groups []Group
	f.d.Get(path, &groups)
	return slices.ContainsFunc(groups, func(g Group) bool {
		return slices.ContainsFunc(g.Hooks, func(h Hook) bool {
			w := Words(h.Command)
			return len(w) > 0 && RunsTasksessiond(w, w[0], "hook", f.Host.Name())
		})
	})
}

// sameArgs reports whether each hook of a group's bytes runs the
// arguments of want's hook.
func sameArgs(raw []byte, want Group) bool {
	var g Group
	json.Unmarshal(raw, &g)
	w := Words(want.Hooks[0].Command)
	return len(g.Hooks) > 0 && !slices.ContainsFunc(g.Hooks, func(h Hook) bool {
		hw := Words(h.Command)
		return len(hw) == 0 || !slices.Equal(hw[1:], w[1:])
	})
}

// sameGroup reports whether a group's bytes are want, as setup writes it:
// its one hook, and nothing beside (a matcher, a timeout).
func sameGroup(raw []byte, want Group) bool {
	var g Group
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if d.Decode(&g) != nil || len(g.Hooks) != len(want.Hooks) {
		return false
	}
	for i, h := range g.Hooks {
		w := want.Hooks[i]
		if h.Type != w.Type || h.Name != w.Name || !slices.Equal(Words(h.Command), Words(w.Command)) {
			return false
		}
	}
	return true
}

// raw is the value at path in doc, compact ("" none): what an edit there
// changed, without the whole file's bytes.
func raw(doc *config.Doc, path []string) string {
	var r json.RawMessage
	doc.Get(path, &r)
	var b bytes.Buffer
	if json.Compact(&b, r) != nil {
		return string(r)
	}
	return b.String()
}
