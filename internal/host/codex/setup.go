package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
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

// Plan sets up the MCP server "tasks" (its tools approved: no prompt per
// call) and the SessionStart hook's trust in a block of config.toml of
// its own (Codex's TOML is the user's, comments and all: the rest of the
// file is not touched), and the hook in hooks.json (strict JSON, as Codex
// reads it). With o.Project it sets up the project's .codex/ instead (see
// planProject).
func (h Host) Plan(o host.Options) (*host.Plan, error) {
	if o.Project != "" {
		return h.planProject(o)
	}
	p := host.NewPlan(h, o)
	dir := home(o)
	hooksPath := filepath.Join(dir, "hooks.json")
	tomlPath := filepath.Join(dir, "config.toml")
	command := h.hookCommand(o)
	index, found, moved, err := h.setHook(p, o, hooksPath, command)
	if err != nil {
		return nil, err
	}
	body := ""
	if !o.Uninstall {
		body = h.serverTable(o) + trustTable(hooksPath, index, command)
	}
	err = editBlock(p, tomlPath, block, body,
		fmt.Sprintf("the MCP server %q (%s) and the hook's trust", Server, host.Command(append([]string{o.Bin}, o.MCPArgs()...)...)),
		fmt.Sprintf("the MCP server %q, the hook's trust", Server),
		tables{server: true, bin: o.Bin, trust: trustHeaders(hooksPath, append(found, index)), moved: moved})
	if err != nil {
		return nil, err
	}
	if !o.Uninstall {
		p.Note("Codex CLI's own update_plan cannot be turned off in its configuration: the model has it beside ours")
	}
	return p, nil
}

// hookCommand is the SessionStart hook's command line.
func (h Host) hookCommand(o host.Options) string {
	return host.Command(append([]string{o.Bin}, o.HookArgs(h.Name())...)...)
}

// setHook plans the SessionStart hook in the hooks.json at hooksPath (or,
// with o.Uninstall or o.NoHook, its removal) and returns the index of its
// group among SessionStart's (-1: none), which its trust is keyed by, the
// indexes of setup's groups as it found them, and the trust tables to
// rename for the user's own groups that the edit moved: Codex keys a
// hook's trust by its index, and the user's trust follows their hook.
func (h Host) setHook(p *host.Plan, o host.Options, hooksPath, command string) (index int, found []int, moved map[string]string, err error) {
	name := h.Name()
	group := host.HookGroup(command, "")
	index = -1
	_, err = host.EditJSON(p, hooksPath, config.JSON, func(d *config.Doc) error {
		found = host.HookIndexes(d, "SessionStart", o.Bin, name)
		before := usersGroups(d, o.Bin, name)
		if o.Uninstall || o.NoHook {
			err := host.RemoveHooks(p, d, hooksPath, "SessionStart", o.Bin, name)
			moved = movedTrust(hooksPath, before, usersGroups(d, o.Bin, name))
			return err
		}
		if err := host.SetHook(p, d, hooksPath, "SessionStart", o.Bin, name, group); err != nil {
			return err
		}
		index = host.HookIndex(d, "SessionStart", group)
		moved = movedTrust(hooksPath, before, usersGroups(d, o.Bin, name))
		return nil
	})
	return index, found, moved, err
}

// usersGroups are the indexes of the SessionStart groups that are not
// setup's, in order.
func usersGroups(d *config.Doc, bin, name string) []int {
	var groups []any
	d.Get([]string{"hooks", "SessionStart"}, &groups)
	ours := host.HookIndexes(d, "SessionStart", bin, name)
	var out []int
	for i := range groups {
		if !slices.Contains(ours, i) {
			out = append(out, i)
		}
	}
	return out
}

// movedTrust maps the trust table of each of the user's groups (their
// handler 0, as Codex keys a group's only hook) from its index before to
// its index after.
func movedTrust(hooksPath string, before, after []int) map[string]string {
	moved := map[string]string{}
	for k, i := range before {
		if k < len(after) && after[k] != i {
			moved[trustHeaders(hooksPath, []int{i})[0]] = trustHeaders(hooksPath, []int{after[k]})[0]
		}
	}
	return moved
}

// editBlock plans setup's block called name in the TOML file at path to
// hold body, or, when body is "", to be gone (a file left empty that
// held only the block is removed); own says which tables are setup's
// (config.SetBlock). holds and held say what the block holds, for the
// steps.
func editBlock(p *host.Plan, path, name, body, holds, held string, own tables) error {
	old, err := config.Read(path)
	if err != nil {
		return host.Refuse(path, err)
	}
	if old != nil {
		if err := config.CheckTOML(old); err != nil {
			return host.Refuse(path, err)
		}
	}
	if mine := usersServer(old, own.bin); own.server && body != "" && mine != "" {
		return host.Refuse(path, fmt.Errorf("mcp_servers.%s is a server of yours (it runs %s), not one setup wrote: setup leaves it; rename or remove it, then run setup again", Server, mine))
	}
	was := config.Block(old, name)
	ownTable := own.claims(old)
	stripped, _ := config.RemoveBlock(old, name, ownTable)
	return p.EditFile(path, old, host.FileEdit{
		Empty: old != nil && len(bytes.TrimSpace(old)) == 0,
		SetUp: was != "" || !bytes.Equal(stripped, old),
		Check: config.CheckTOML,
		Ours:  func(b []byte) bool { return bytes.Contains(b, []byte("# >>> "+block)) },
		Edit: func() ([]byte, bool, error) {
			newb, err := blockEdit(p, path, old, name, body, holds, held, was, ownTable)
			if err != nil {
				return nil, false, err
			}
			return config.RenameTables(newb, own.moved), body == "" && len(newb) == 0 && len(old) > 0, nil
		},
	})
}

// blockEdit is old with the block called name holding body, or gone,
// and says so in p's steps.
func blockEdit(p *host.Plan, path string, old []byte, name, body, holds, held, was string, ownTable func(string) bool) ([]byte, error) {
	if body == "" {
		newb, err := config.RemoveBlock(old, name, ownTable)
		if err != nil {
			return nil, err
		}
		switch {
		case was != "":
			p.Step("remove setup's block (%s) from %s", held, path)
		case string(newb) != string(old):
			p.Step("remove setup's tables (%s), left without their block by a rewrite of Codex's, from %s", held, path)
		}
		return newb, nil
	}
	newb, err := config.SetBlock(old, name, body, ownTable)
	if err != nil {
		return nil, err
	}
	switch {
	case string(newb) == string(old):
	case was == "":
		p.Step("add %s to %s", holds, path)
	default:
		p.Step("replace setup's block in %s (it was:\n%s)", path, strings.TrimRight(was, "\r\n"))
	}
	return newb, nil
}

// tables say which tables of a config.toml are setup's: the server's
// (when it runs tasksessiond: a server of the user's called tasks is
// not), and the trust of setup's hook, by header. Another is the user's
// or Codex's own (a project's trust, a server added, a hook of the
// user's trusted), wherever Codex wrote it, and stays. Codex writes the
// file too ("codex mcp add", trusting a project): it prints a new table
// before the file's last comment (setup's end marker), and writes the
// servers' tables anew, setup's begin marker lost (held by e2e/codex,
// TestSetupKeepsCodexsOwnTables).
type tables struct {
	server bool
	bin    string
	trust  []string
	moved  map[string]string // tables of the user's to rename (setHook)
}

// serverMembers are the members setup writes in its server's table.
var serverMembers = []string{"default_tools_approval_mode", "startup_timeout_sec"}

// usersServer is the command line of the server called Server in the
// config.toml b when it is the user's, not one setup wrote ("" when
// there is none, or it is setup's).
func usersServer(b []byte, bin string) string {
	var cfg struct {
		Servers map[string]map[string]any `toml:"mcp_servers"`
	}
	config.DecodeTOML(b, &cfg) // checked already
	s, ok := cfg.Servers[Server]
	if !ok || host.SetupsServer(s, bin, serverMembers...) {
		return ""
	}
	c, _ := s["command"].(string)
	words := []string{c}
	if args, ok := s["args"].([]any); ok {
		for _, a := range args {
			w, _ := a.(string)
			words = append(words, w)
		}
	}
	return host.Command(words...)
}

// claims is t for the config.toml b, as config.SetBlock takes it.
func (t tables) claims(b []byte) func(header string) bool {
	var cfg struct {
		Servers map[string]any `toml:"mcp_servers"`
	}
	config.DecodeTOML(b, &cfg)
	_, has := cfg.Servers[Server]
	server := t.server && has && usersServer(b, t.bin) == ""
	return func(h string) bool {
		return server && (h == "mcp_servers."+Server || strings.HasPrefix(h, "mcp_servers."+Server+".")) || slices.Contains(t.trust, h)
	}
}

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
func (h Host) serverTable(o host.Options) string {
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
