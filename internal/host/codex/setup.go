package codex

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// Server is the MCP server's name setup gives it: Codex offers its tools
// to the model as mcp__tasks__TaskCreate and so on.
const Server = "tasks"

// block names setup's block in config.toml; the block that holds the
// trust of a project's hook is named after the project too.
const block = "tasksessiond"

// serverMembers are what setup writes in its server's table beside
// command, args and env.
var serverMembers = []string{"default_tools_approval_mode", "startup_timeout_sec"}

// Plan declares Codex's setup, what goes where:
//   - hooks.json (strict JSON, as Codex reads it): the SessionStart hook;
//   - config.toml, in a block of setup's own (the rest of the file is the
//     user's, comments and all): the MCP server "tasks", its tools
//     approved, and the hook's trust.
//
// With --project, the server and the hook go in the project's .codex/ (a
// linked worktree's hook in its main checkout's, where Codex reads it),
// and the hook's trust in a block of its own in the user's config.toml,
// the only one Codex reads it from (files).
func (h Host) Plan(o host.Options) (*host.Plan, error) {
	f, err := files(o)
	if err != nil {
		return nil, err
	}
	p, err := host.NewPlan(h, o)
	if err != nil {
		return nil, err
	}
	hook := host.Command(append([]string{o.Bin}, o.HookArgs(h.Name())...)...)
	sessionStart := []string{"hooks", "SessionStart"}
	before := p.SetupsGroups(f.hooks, sessionStart) // by the record as read
	if !f.shared {
		err := p.Declare([]host.Entry{{File: f.hooks, Dialect: config.JSON, Kind: host.OwnHook, Path: sessionStart, Value: host.HookGroup(hook, "")}})
		if err != nil {
			return nil, err
		}
	}
	// Codex keys a hook's trust by its group's index: so the hook first,
	// then its trust where it landed.
	index, tables, rename := follow(p, f.hooks, before, p.SetupsGroups(f.hooks, sessionStart))
	server := host.Block{Name: block, Body: serverTable(o), Server: []string{"mcp_servers", Server}, Members: serverMembers, Remove: "codex mcp remove " + Server,
		Holds: fmt.Sprintf("the MCP server %q (%s)", Server, host.Command(append([]string{o.Bin}, o.MCPArgs()...)...))}
	trust := host.Block{Name: block + " project " + f.owner, Body: trustTable(f.hooks, index, hook), Tables: tables, Rename: rename,
		Holds: fmt.Sprintf("the trust of %s's hook (Codex reads a hook's trust from your config.toml only)", f.owner)}
	if o.Project == "" { // one file, so one block holds both
		server.Body, server.Tables, server.Rename = server.Body+trust.Body, tables, rename
		server.Holds += " and the hook's trust"
	}
	es := []host.Entry{{File: f.serverTOML, Dialect: config.TOML, Kind: host.OwnBlock, Value: server}}
	if o.Project != "" && !f.shared {
		es = append(es, host.Entry{File: f.userTOML, Dialect: config.TOML, Kind: host.OwnBlock, Value: trust})
	}
	if err := p.Declare(es); err != nil {
		return nil, err
	}
	if !o.Uninstall {
		f.notes(p, o, h.Name())
	}
	return p, nil
}

// serverTable is the MCP server's tables in setup's block.
func serverTable(o host.Options) string {
	s := fmt.Sprintf(`[mcp_servers.%s]
command = %s
args = [%s]
default_tools_approval_mode = "approve"
startup_timeout_sec = 30
`, Server, tq(o.Bin), tqList(o.MCPArgs()))
	if env := o.MCPEnv(); env != nil {
		s += "[mcp_servers." + Server + ".env]\n"
		for _, k := range []string{"TASKSESSIOND_SOCKET", "TASKSESSIOND_DB"} {
			if v, ok := env[k]; ok {
				s += k + " = " + tq(v.(string)) + "\n"
			}
		}
	}
	return s
}

// trustTable is the trust of the hook at index of SessionStart's groups
// in hooks, as Codex records it when the user trusts the hook ("" for
// index -1: no hook).
func trustTable(hooks string, index int, command string) string {
	if index < 0 {
		return ""
	}
	return fmt.Sprintf(`[%s]
enabled = true
trusted_hash = %s
`, trustHeader(hooks, index), tq(HookTrustHash("session_start", "", command, 600)))
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

// where are the files setup edits, for the user or a project (Plan).
// owner is the directory whose .codex holds the hooks.json Codex reads
// for the project, which names the block of the hook's trust: a linked
// worktree and its main checkout share that hook, and one block.
type where struct {
	hooks, serverTOML, userTOML string
	dir, owner, main            string // the project's; main: a linked worktree's main checkout ("" none)
	shared                      bool   // --no-hook in a linked worktree: the hook is the main checkout's too, and stays
}

func files(o host.Options) (where, error) {
	user := home(o)
	w := where{hooks: filepath.Join(user, "hooks.json"), serverTOML: filepath.Join(user, "config.toml"), userTOML: filepath.Join(user, "config.toml")}
	if o.Project == "" {
		return w, nil
	}
	dir, err := projectDir(o.Project)
	if err != nil {
		return w, err
	}
	dotCodex := filepath.Join(dir, ".codex")
	if same(dotCodex, user) {
		return w, fmt.Errorf("codex: %s is $CODEX_HOME, which Codex reads as your user configuration, not a project's: run setup without --project", dotCodex)
	}
	hooks, main := hooksFolder(dir)
	if same(hooks, user) {
		return w, fmt.Errorf("codex: %s is a linked worktree of %s, whose .codex Codex reads its hooks from, and that is $CODEX_HOME, your user configuration: run setup without --project", dir, main)
	}
	w.hooks, w.serverTOML = filepath.Join(hooks, "hooks.json"), filepath.Join(dotCodex, "config.toml")
	w.dir, w.owner, w.main = dir, filepath.Dir(hooks), main
	w.shared = main != "" && o.NoHook && !o.Uninstall
	return w, nil
}

// follow reads the plan's edit of the hooks file: the index setup's group
// landed at (-1: none), the trust tables of setup's groups there and as
// found (setup's wherever Codex moved them), and the renames that keep
// the trust of the user's groups the edit moved. Which groups are setup's
// the record says, as read and as planned (a group the user wrote by
// hand, and its trust, are theirs).
func follow(p *host.Plan, hooks string, oursBefore, oursAfter func([]byte) bool) (index int, tables []string, rename map[string]string) {
	var before, after []byte
	for _, c := range p.Changes {
		if c.Path == hooks {
			before, after = c.Old, c.New
		}
	}
	setups, users := groups(before, oursBefore)
	setupsNow, usersNow := groups(after, oursAfter)
	index = -1
	if len(setupsNow) > 0 {
		index = setupsNow[0]
		setups = append(setups, index)
	}
	for _, i := range setups {
		tables = append(tables, trustHeader(hooks, i))
	}
	rename = map[string]string{}
	for k, i := range users { // groups are only replaced, added or taken out: the k-th stays the k-th
		if k < len(usersNow) && usersNow[k] != i {
			rename[trustHeader(hooks, i)] = trustHeader(hooks, usersNow[k])
		}
	}
	return index, tables, rename
}

// groups are the indexes of SessionStart's groups in the hooks file b:
// setup's (ours), and the user's.
func groups(b []byte, ours func([]byte) bool) (setups, users []int) {
	var gs []json.RawMessage
	if d, err := config.ParseJSON(b, config.JSON); err == nil {
		d.Get([]string{"hooks", "SessionStart"}, &gs)
	}
	for i, g := range gs {
		if ours(g) {
			setups = append(setups, i)
		} else {
			users = append(users, i)
		}
	}
	return setups, users
}

// notes say what setup means for Codex beyond its files: whether Codex
// trusts the project (setup leaves that to the user: it covers all of
// .codex/, not only what setup wrote), where a linked worktree's hook is,
// a hook of the user's that runs too.
func (w where) notes(p *host.Plan, o host.Options, name string) {
	if o.Project != "" {
		dotCodex := filepath.Join(w.dir, ".codex")
		user, _ := readSettings(w.userTOML) // one Codex cannot read trusts nothing
		if level, key := user.trust(w.dir); level == "trusted" {
			p.Note("Codex loads %s only in a trusted project: %s is trusted in %s", dotCodex, key, w.userTOML)
		} else {
			f := distrust(w.userTOML, w.dir, level, key)
			p.Note("%s; %s. Setup does not: that trust covers all of %s, not only what setup wrote", f.Problem, f.Fix, dotCodex)
		}
		if w.main != "" {
			does := "setup puts the hook there"
			if o.NoHook {
				does = "--no-hook leaves the hook there"
			}
			p.Note("%s is in a linked git worktree of %s: Codex reads its hooks from %s, not from %s, so %s, where it runs in %s too and in each worktree of it whose .codex/ Codex loads (setup --uninstall, here or there, takes it out of all of them)", w.dir, w.main, w.hooks, filepath.Join(dotCodex, "hooks.json"), does, w.owner)
		}
		userHooks := filepath.Join(home(o), "hooks.json")
		b, err := config.Read(userHooks)
		if setups, _ := groups(b, host.OurGroup(o.Bin, name)); err == nil && len(setups) > 0 && !o.NoHook {
			p.Note("the SessionStart hook is in %s too: in this project Codex runs it twice, and the list comes twice into the conversation; keep one of the two (--no-hook here, or there)", userHooks)
		}
	}
	p.Note("Codex CLI's own update_plan cannot be turned off in its configuration: the model has it beside ours")
}
