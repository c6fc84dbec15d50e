package claudecode

import (
	"path/filepath"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// Server is the MCP server's name setup gives it: the model knows the
// tools as mcp__tasks__TaskCreate and so on, and the hook's text names
// them so.
const Server = "tasks"

// allowRule spares the user a prompt per call (and lets "claude -p" call
// the tools at all).
const allowRule = "mcp__" + Server

// ownTools are Claude Code's own to-do tools: on, beside ours, on the
// models where Claude Code turns them on. A deny rule takes a tool out of
// what the model is offered.
var ownTools = []string{"TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "TodoWrite"}

// configDir is where Claude Code keeps settings.json: $CLAUDE_CONFIG_DIR,
// else ~/.claude.
func configDir(o host.Options) string {
	if d := o.Dir("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	return filepath.Join(o.Home(), ".claude")
}

// stateFile is the file "claude mcp add --scope user" writes:
// $CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json.
func stateFile(o host.Options) string {
	if d := o.Dir("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, ".claude.json")
	}
	return filepath.Join(o.Home(), ".claude.json")
}

// files are the server's file and the settings file setup edits.
func files(o host.Options) (servers, settings string) {
	if o.Project != "" {
		return filepath.Join(o.Project, ".mcp.json"), filepath.Join(o.Project, ".claude", "settings.json")
	}
	return stateFile(o), filepath.Join(configDir(o), "settings.json")
}

// entries are Claude Code's setup: the MCP server "tasks" (in
// ~/.claude.json, as "claude mcp add --scope user" does; in a project,
// .mcp.json), and in settings.json the allow rule, deny rules for Claude
// Code's own to-do tools, a project's approval of its server, and the
// SessionStart hook (every source: startup, resume, clear, compact, fork).
// Both files are strict JSON as Claude Code reads them.
func (h Host) entries(o host.Options) []host.Entry {
	servers, settings := files(o)
	es := []host.Entry{
		{File: servers, Kind: host.OwnServer, Path: []string{"mcpServers", Server}, Value: host.Server{Type: "stdio", Command: o.Bin, Args: o.MCPArgs(), Env: o.MCPEnv()}},
		{File: settings, Kind: host.UserString, Path: []string{"permissions", "allow"}, Value: allowRule},
	}
	for _, t := range ownTools {
		es = append(es, host.Entry{File: settings, Kind: host.UserString, Path: []string{"permissions", "deny"}, Value: t})
	}
	if o.Project != "" { // a project's servers run once approved; setup is the approval
		es = append(es, host.Entry{File: settings, Kind: host.UserString, Path: []string{"enabledMcpjsonServers"}, Value: Server})
	}
	hook := host.Command(append([]string{o.Bin}, o.HookArgs(h.Name())...)...)
	return append(es, host.Entry{File: settings, Kind: host.OwnHook, Path: []string{"hooks", "SessionStart"}, Value: host.HookGroup(hook, "")})
}

// Plan plans the entries.
func (h Host) Plan(o host.Options) (*host.Plan, error) {
	_, settings := files(o)
	if err := host.NotUsers(o, settings, filepath.Join(configDir(o), "settings.json")); err != nil {
		return nil, err
	}
	p, err := host.Declared(h, o, h.entries(o))
	if err == nil && !o.Uninstall {
		p.Note("Claude Code's own to-do tools (%s) are denied in %s, so the model sees one list: ours", strings.Join(ownTools, ", "), settings)
	}
	return p, err
}

// Check finds servers that run tasksessiond mcp under another name.
func (h Host) Check(o host.Options) []host.Finding {
	servers, _ := files(o)
	return host.OtherServers(h, o, servers, config.JSON, []string{"mcpServers"}, Server,
		"also runs tasksessiond mcp: the model gets the tools twice, and the hook names them mcp__"+Server+"__…",
		func(n string) string { return "claude mcp remove " + n })
}
