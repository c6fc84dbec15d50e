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

// block names setup's block in config.toml.
const block = "tasksessiond"

// home is $CODEX_HOME, else ~/.codex.
func home(o host.Options) string {
	if d := o.Dir("CODEX_HOME"); d != "" {
		return d
	}
	return filepath.Join(o.Home(), ".codex")
}

// Plan declares Codex's setup: the SessionStart hook in hooks.json
// (strict JSON, as Codex reads it), and, in a block of config.toml of
// setup's own (the rest of that file is the user's, comments and all),
// the MCP server "tasks" (its tools approved: no prompt per call) and the
// hook's trust. Codex keys a hook's trust by the index of its group, so
// the hook is planned first and its trust declared where it landed, the
// user's own trust following the user's groups it moved. With o.Project,
// the project's .codex/ (setup_project.go).
func (h Host) Plan(o host.Options) (*host.Plan, error) {
	f, err := files(o)
	if err != nil {
		return nil, err
	}
	command := host.Command(append([]string{o.Bin}, o.HookArgs(h.Name())...)...)
	group := host.HookGroup(command, "")
	p, err := host.NewPlan(h, o)
	if err != nil {
		return nil, err
	}
	if f.shared {
		p.Note("%s is in a linked git worktree of %s, whose %s Codex reads its hooks from: --no-hook leaves the hook there, for it runs in %s too (setup --uninstall takes it out)", f.dir, f.main, f.hooks, f.owner)
	} else if err := p.Declare([]host.Entry{{File: f.hooks, Dialect: config.JSON, Kind: host.OwnHook, Path: []string{"hooks", "SessionStart"}, Value: group}}); err != nil {
		return nil, err
	}
	index, found, moved := placed(p, f.hooks, o, h.Name())
	server := host.Block{Name: block, Body: serverTable(o), Server: []string{"mcp_servers", Server}, Members: serverMembers,
		Holds: fmt.Sprintf("the MCP server %q (%s)", Server, host.Command(append([]string{o.Bin}, o.MCPArgs()...)...))}
	trust := host.Block{Name: projectBlock(f.owner), Body: trustTable(f.hooks, index, command), Tables: trustHeaders(f.hooks, append(found, index)), Rename: moved,
		Holds: fmt.Sprintf("the trust of %s's hook (Codex reads a hook's trust from your config.toml only)", f.owner)}
	es := []host.Entry{{File: f.serverTOML, Dialect: config.TOML, Kind: host.OwnBlock, Value: server}}
	switch {
	case o.Project == "": // one block holds both
		server.Body, server.Holds = server.Body+trust.Body, server.Holds+" and the hook's trust"
		server.Tables, server.Rename = trust.Tables, trust.Rename
		es[0].Value = server
	case !f.shared:
		es = append(es, host.Entry{File: f.userTOML, Dialect: config.TOML, Kind: host.OwnBlock, Value: trust})
	}
	if err := p.Declare(es); err != nil {
		return nil, err
	}
	if o.Uninstall || f.shared {
		return p, nil
	}
	if o.Project != "" {
		projectNotes(p, o, f, h.Name())
	}
	p.Note("Codex CLI's own update_plan cannot be turned off in its configuration: the model has it beside ours")
	return p, nil
}

// placed reads the plan's change of hooksPath: the index of setup's group
// among SessionStart's as planned (-1: none), the indexes of setup's
// groups as found, and the trust tables to rename for the user's groups
// the edit moved (their handler 0, as Codex keys a group's only hook).
func placed(p *host.Plan, hooksPath string, o host.Options, name string) (index int, found []int, moved map[string]string) {
	var old, newb []byte
	for _, c := range p.Changes {
		if c.Path == hooksPath {
			old, newb = c.Old, c.New
		}
	}
	found, before := groups(old, o.Bin, name)
	ours, after := groups(newb, o.Bin, name)
	index, moved = -1, map[string]string{}
	if len(ours) > 0 {
		index = ours[0]
	}
	for k, i := range before {
		if k < len(after) && after[k] != i {
			moved[trustHeaders(hooksPath, []int{i})[0]] = trustHeaders(hooksPath, []int{after[k]})[0]
		}
	}
	return index, found, moved
}

// groups are the indexes of SessionStart's groups in the hooks file b:
// setup's, and the user's.
func groups(b []byte, bin, name string) (ours, users []int) {
	var gs []json.RawMessage
	if d, err := config.ParseJSON(b, config.JSON); err == nil {
		d.Get([]string{"hooks", "SessionStart"}, &gs)
	}
	for i, g := range gs {
		if host.OurGroup(bin, name)(g) {
			ours = append(ours, i)
		} else {
			users = append(users, i)
		}
	}
	return ours, users
}

// serverMembers are the members setup writes in its server's table.
var serverMembers = []string{"default_tools_approval_mode", "startup_timeout_sec"}

// trustHeaders are the headers of the trust tables of the SessionStart
// groups at indexes in hooksPath.
func trustHeaders(hooksPath string, indexes []int) []string {
	var out []string
	for _, i := range indexes {
		if i >= 0 {
			out = append(out, "hooks.state."+tq(trustKey(hooksPath, i)))
		}
	}
	return out
}

func trustKey(hooksPath string, index int) string {
	return fmt.Sprintf("%s:session_start:%d:0", hooksPath, index)
}

// serverTable is the MCP server's tables in setup's block.
func serverTable(o host.Options) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("[mcp_servers.%s]", Server)
	line("command = %s", tq(o.Bin))
	line("args = [%s]", tqList(o.MCPArgs()))
	line(`default_tools_approval_mode = "approve"`)
	line("startup_timeout_sec = 30")
	if env := o.MCPEnv(); env != nil {
		line("[mcp_servers.%s.env]", Server)
		for _, k := range []string{"TASKSESSIOND_SOCKET", "TASKSESSIOND_DB"} {
			if v, ok := env[k]; ok {
				line("%s = %s", k, tq(v.(string)))
			}
		}
	}
	return b.String()
}

// trustTable is the trust of the hook at index of SessionStart's groups
// in hooksPath ("" for index -1: none), as Codex records it when the user
// trusts the hook.
func trustTable(hooksPath string, index int, command string) string {
	if index < 0 {
		return ""
	}
	return fmt.Sprintf("[hooks.state.%s]\nenabled = true\ntrusted_hash = %s\n",
		tq(trustKey(hooksPath, index)),
		tq(HookTrustHash("session_start", "", command, 600)))
}

// Check finds servers that run tasksessiond mcp under another name, and,
// for a project, that Codex does not trust it (it then loads none of its
// .codex/).
func (h Host) Check(o host.Options) []host.Finding {
	path := filepath.Join(home(o), "config.toml")
	var out []host.Finding
	if o.Project != "" {
		dir, err := projectDir(o.Project)
		if err != nil {
			return nil
		}
		if level, key := trustLevel(path, dir); level != "trusted" {
			out = append(out, host.Finding{
				Problem: "Codex does not trust the project " + key + " (" + path + "): it loads none of " + filepath.Join(dir, ".codex"),
				Fix:     "start Codex in " + dir + " and trust the folder, or set trust_level = \"trusted\" under [projects." + tq(key) + "] in " + path,
			})
		}
		path = filepath.Join(dir, ".codex", "config.toml")
	}
	b, err := config.Read(path)
	if err != nil || b == nil {
		return out
	}
	var cfg struct {
		Servers map[string]struct {
			Command string   `toml:"command"`
			Args    []string `toml:"args"`
		} `toml:"mcp_servers"`
	}
	if err := config.DecodeTOML(b, &cfg); err != nil {
		return append(out, host.Finding{Problem: host.Refuse(path, err).Error(), Fix: "repair the file, then: tasksessiond setup " + h.Name()})
	}
	for n, s := range cfg.Servers {
		if n != Server && host.RunsTasksessiond(append([]string{s.Command}, s.Args...), o.Bin, "mcp") {
			fix := "codex mcp remove " + n
			if o.Project != "" {
				fix = "remove [mcp_servers." + n + "] from " + path
			}
			out = append(out, host.Finding{
				Problem: "the MCP server " + n + " in " + path + " also runs tasksessiond mcp: the model gets the tools twice",
				Fix:     fix,
			})
		}
	}
	return out
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
