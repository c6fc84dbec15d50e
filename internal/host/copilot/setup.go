package copilot

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"

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
	entry := map[string]any{"type": "command", "bash": command, "timeoutSec": hookTimeout}
	want, err := json.Marshal(entry)
	if err != nil {
		return nil, err
	}
	hooksDoc, err := host.EditJSON(p, hooksPath, config.JSONComments, func(d *config.Doc) error {
		// A hook is setup's by what it runs ("tasksessiond hook copilot",
		// any binary): an earlier setup's goes, the one wanted stays.
		for _, ev := range HookEvents {
			path := []string{"hooks", ev}
			keep := o.Uninstall || o.NoHook
			n := d.RemoveIf(path, 0, func(raw []byte) bool {
				var e struct {
					Bash string `json:"bash"`
				}
				if json.Unmarshal(raw, &e) != nil || !host.RunsTasksessiond(host.Words(e.Bash), o.Bin, "hook", h.Name()) {
					return false
				}
				return keep || !sameJSON(raw, want)
			})
			if keep {
				if n > 0 {
					p.Step("remove the %s hook from %s", ev, hooksPath)
				}
				continue
			}
			var had []json.RawMessage
			d.Get(path, &had)
			if err := d.Append(path, entry); err != nil {
				return err
			}
			var now []json.RawMessage
			if d.Get(path, &now); len(now) != len(had) {
				p.Step("add the %s hook (%s) to %s", ev, command, hooksPath)
			}
		}
		var hooks map[string]json.RawMessage
		d.Get([]string{"hooks"}, &hooks)
		if len(hooks) == 0 {
			// None left of anyone's: the file's version goes with them.
			d.Delete([]string{"hooks"}, 0)
			d.Delete([]string{"version"}, 0)
			return nil
		}
		var v json.RawMessage
		if !d.Get([]string{"version"}, &v) {
			return d.Set([]string{"version"}, 1)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if c := &p.Changes[len(p.Changes)-1]; c.Path == hooksPath && hooksDoc.IsEmpty() && c.New != nil {
		// The file is setup's own (its name says so): left empty, it
		// goes, whichever setup made it.
		c.New = nil
	}
	if !o.Uninstall {
		p.Note("%s", ownTodos)
	}
	return p, nil
}

// sameJSON reports whether two JSON values are equal.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
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
