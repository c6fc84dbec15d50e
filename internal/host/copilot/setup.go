package copilot

import (
	"os"
	"os/exec"
	"path/filepath"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// Server is the MCP server's name setup gives it: Copilot CLI offers the
// tools to the model as tasks-TaskCreate and so on.
const Server = "tasks"

// hookTimeout is each hook's timeoutSec (Copilot CLI's default is 30).
const hookTimeout = 30

// home is Copilot CLI's directory: $COPILOT_HOME, else ~/.copilot.
func home(o host.Options) string {
	if d := o.Env("COPILOT_HOME"); d != "" {
		return d
	}
	return filepath.Join(o.Home(), ".copilot")
}

// files are the MCP config and the hooks file setup writes: the user's
// (~/.copilot/mcp-config.json, ~/.copilot/hooks/tasksessiond.json) or a
// project's (.github/mcp.json, .github/hooks/tasksessiond.json).
func files(o host.Options) (mcpConfig, hooks string) {
	if o.Project != "" {
		gh := filepath.Join(o.Project, ".github")
		return filepath.Join(gh, "mcp.json"), filepath.Join(gh, "hooks", "tasksessiond.json")
	}
	return filepath.Join(home(o), "mcp-config.json"), filepath.Join(home(o), "hooks", "tasksessiond.json")
}

// Found reports whether Copilot CLI is on PATH or has its directory.
func (Host) Found(o host.Options) bool {
	if _, err := exec.LookPath("copilot"); err == nil {
		return true
	}
	_, err := os.Stat(home(o))
	return err == nil
}

// ownTodos is what setup says of Copilot CLI's own to-do list.
const ownTodos = "Copilot CLI's own to-do list is a todos table of its built-in sql tool, which no setting turns off: " +
	"only starting it with --excluded-tools sql removes it (and the sql tool with it). For one list, ours: " +
	"alias copilot='copilot --excluded-tools sql'"

// Plan sets up the MCP server "tasks" (every tool allowed) in the MCP
// config, and the hooks (sessionStart, userPromptSubmitted, preCompact,
// preMcpToolCall) in a hooks file of setup's own.
func (h Host) Plan(o host.Options) (*host.Plan, error) {
	p := host.NewPlan(h, o)
	mcpPath, hooksPath := files(o)
	serverPath := []string{"mcpServers", Server}
	_, err := host.EditJSON(p, mcpPath, config.JSONComments, func(d *config.Doc) error {
		if o.Uninstall {
			return host.RemoveServer(p, d, mcpPath, serverPath, o.Bin)
		}
		return host.SetServer(p, d, mcpPath, serverPath,
			host.Server{Type: "local", Command: o.Bin, Args: o.MCPArgs(), Env: o.MCPEnv(), Tools: []string{"*"}})
	})
	if err != nil {
		return nil, err
	}
	command := host.Command(append([]string{o.Bin}, o.HookArgs(h.Name())...)...)
	_, err = host.EditJSON(p, hooksPath, config.JSONComments, func(d *config.Doc) error {
		for _, ev := range HookEvents {
			path := []string{"hooks", ev}
			entry := []any{map[string]any{"type": "command", "bash": command, "timeoutSec": hookTimeout}}
			if o.Uninstall || o.NoHook {
				if err := host.UnsetValue(p, d, hooksPath, path, entry); err != nil {
					return err
				}
				continue
			}
			if err := host.SetValue(p, d, hooksPath, path, entry); err != nil {
				return err
			}
		}
		if o.Uninstall || o.NoHook {
			var hooks map[string]any
			if d.Get([]string{"hooks"}, &hooks) && len(hooks) == 0 {
				d.Delete([]string{"hooks"}, 0)
			}
			return host.UnsetValue(p, d, hooksPath, []string{"version"}, 1)
		}
		return host.SetValue(p, d, hooksPath, []string{"version"}, 1)
	})
	if err != nil {
		return nil, err
	}
	if !o.Uninstall {
		p.Note("%s", ownTodos)
	}
	return p, nil
}

// Check finds servers that run tasksessiond mcp under another name.
func (h Host) Check(o host.Options) []host.Finding {
	path, _ := files(o)
	b, err := config.Read(path)
	if err != nil || b == nil {
		return nil
	}
	d, err := config.ParseJSON(b, config.JSONComments)
	if err != nil {
		return []host.Finding{{Problem: host.Refuse(path, err).Error(), Fix: "repair the file, then: tasksessiond setup " + h.Name()}}
	}
	var out []host.Finding
	for _, n := range host.OtherServers(d, []string{"mcpServers"}, Server, o.Bin) {
		out = append(out, host.Finding{
			Problem: "the MCP server " + n + " in " + path + " also runs tasksessiond mcp: the model gets the tools twice, and the hooks name them " + Server + "-…",
			Fix:     "remove mcpServers." + n + " from " + path,
		})
	}
	return out
}
