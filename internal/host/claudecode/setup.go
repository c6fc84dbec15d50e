package claudecode

import (
	"os"
	"os/exec"
	"path/filepath"

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

// files are the server's file and the settings file setup edits, and the
// path of the servers in the first.
func files(o host.Options) (servers string, serversPath []string, settings string) {
	if o.Project != "" {
		return filepath.Join(o.Project, ".mcp.json"), []string{"mcpServers"}, filepath.Join(o.Project, ".claude", "settings.json")
	}
	return stateFile(o), []string{"mcpServers"}, filepath.Join(configDir(o), "settings.json")
}

// Found reports whether Claude Code is on PATH or has its config dir.
func (Host) Found(o host.Options) bool {
	if _, err := exec.LookPath("claude"); err == nil {
		return true
	}
	_, err := os.Stat(configDir(o))
	return err == nil
}

// Plan sets up the MCP server "tasks" (in ~/.claude.json, as "claude mcp
// add --scope user" does; in a project, .mcp.json), and in settings.json
// the allow rule, the SessionStart hook (every source: startup, resume,
// clear, compact, fork) and deny rules for Claude Code's own to-do tools.
func (h Host) Plan(o host.Options) (*host.Plan, error) {
	p := host.NewPlan(h, o)
	serversFile, serversPath, settings := files(o)
	name := h.Name()
	serverPath := append(serversPath, Server)
	// The state file is JSON as Claude Code writes it; settings.json is
	// read by a JSON parser too.
	if _, err := host.EditJSON(p, serversFile, config.JSON, func(d *config.Doc) error {
		if o.Uninstall {
			return host.RemoveServer(p, d, serversFile, serverPath, o.Bin)
		}
		entry := host.Server{Type: "stdio", Command: o.Bin, Args: o.MCPArgs(), Env: o.MCPEnv()}
		return host.SetServer(p, d, serversFile, serverPath, entry)
	}); err != nil {
		return nil, err
	}
	hook := host.HookGroup(host.Command(append([]string{o.Bin}, o.HookArgs(name)...)...), "")
	if _, err := host.EditJSON(p, settings, config.JSON, func(d *config.Doc) error {
		if o.Uninstall {
			if err := host.RemoveHooks(p, d, settings, "SessionStart", o.Bin, name); err != nil {
				return err
			}
			if err := host.RemoveString(p, d, settings, []string{"permissions", "allow"}, allowRule); err != nil {
				return err
			}
			for _, t := range ownTools {
				if err := host.RemoveString(p, d, settings, []string{"permissions", "deny"}, t); err != nil {
					return err
				}
			}
			if o.Project != "" {
				if err := host.RemoveString(p, d, settings, []string{"enabledMcpjsonServers"}, Server); err != nil {
					return err
				}
			}
			return nil
		}
		if err := host.AddString(p, d, settings, []string{"permissions", "allow"}, allowRule); err != nil {
			return err
		}
		for _, t := range ownTools {
			if err := host.AddString(p, d, settings, []string{"permissions", "deny"}, t); err != nil {
				return err
			}
		}
		if o.Project != "" {
			// a project's servers run once approved; setup is the approval
			if err := host.AddString(p, d, settings, []string{"enabledMcpjsonServers"}, Server); err != nil {
				return err
			}
		}
		if o.NoHook { // a hook an earlier setup added goes
			return host.RemoveHooks(p, d, settings, "SessionStart", o.Bin, name)
		}
		return host.SetHook(p, d, settings, "SessionStart", o.Bin, name, hook)
	}); err != nil {
		return nil, err
	}
	if !o.Uninstall {
		p.Note("Claude Code's own to-do tools (%s) are denied in %s, so the model sees one list: ours", joinList(ownTools), settings)
	}
	return p, nil
}

// Check finds servers that run tasksessiond mcp under another name: the
// hook's text names the tools mcp__tasks__….
func (h Host) Check(o host.Options) []host.Finding {
	var out []host.Finding
	serversFile, serversPath, _ := files(o)
	b, err := config.Read(serversFile)
	if err != nil || b == nil {
		return nil
	}
	d, err := config.ParseJSON(b, config.JSON)
	if err != nil {
		return []host.Finding{{Problem: host.Refuse(serversFile, err).Error(), Fix: "repair the file, then: tasksessiond setup " + h.Name()}}
	}
	for _, n := range host.OtherServers(d, serversPath, Server, o.Bin) {
		out = append(out, host.Finding{
			Problem: "the MCP server " + n + " in " + serversFile + " also runs tasksessiond mcp: the model gets the tools twice, and the hook names them mcp__" + Server + "__…",
			Fix:     "claude mcp remove " + n,
		})
	}
	return out
}

func joinPath(path []string) string {
	s := ""
	for i, x := range path {
		if i > 0 {
			s += "."
		}
		s += x
	}
	return s
}

func joinList(xs []string) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		s += x
	}
	return s
}
