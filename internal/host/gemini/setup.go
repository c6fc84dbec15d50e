package gemini

import (
	"os"
	"os/exec"
	"path/filepath"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// Server is the MCP server's name setup gives it: the model knows the
// tools as mcp_tasks_TaskCreate and so on.
const Server = "tasks"

// hookEvents are the events the hook serves: SessionStart binds the
// session (and adds the list on resume), BeforeModel puts the list after
// a compression's summary.
var hookEvents = []string{"SessionStart", "BeforeModel"}

// settingsFile is Gemini CLI's settings.json: in its home
// ($GEMINI_CLI_HOME, else ~)/.gemini, or a project's .gemini.
func settingsFile(o host.Options) string {
	if o.Project != "" {
		return filepath.Join(o.Project, ".gemini", "settings.json")
	}
	home := o.Dir("GEMINI_CLI_HOME")
	if home == "" {
		home = o.Home()
	}
	return filepath.Join(home, ".gemini", "settings.json")
}

// Found reports whether Gemini CLI is on PATH or has its settings dir.
func (Host) Found(o host.Options) bool {
	if _, err := exec.LookPath("gemini"); err == nil {
		return true
	}
	_, err := os.Stat(filepath.Dir(settingsFile(o)))
	return err == nil
}

// Plan sets up, in settings.json (comments allowed, trailing commas not:
// Gemini CLI strips comments, then JSON.parse), the MCP server "tasks",
// trusted (its calls need no confirmation each), the hooks, and
// "useWriteTodos": false (Gemini CLI's own write_todos off).
func (h Host) Plan(o host.Options) (*host.Plan, error) {
	p := host.NewPlan(h, o)
	path := settingsFile(o)
	name := h.Name()
	serverPath := []string{"mcpServers", Server}
	hook := host.HookGroup(host.Command(append([]string{o.Bin}, o.HookArgs(name)...)...), "tasksessiond")
	_, err := host.EditJSON(p, path, config.JSONComments, func(d *config.Doc) error {
		if o.Uninstall {
			if err := host.RemoveServer(p, d, path, serverPath, o.Bin); err != nil {
				return err
			}
			for _, ev := range hookEvents {
				if err := host.RemoveHooks(p, d, path, ev, o.Bin, name); err != nil {
					return err
				}
			}
			return host.UnsetValue(p, d, path, []string{"useWriteTodos"}, false)
		}
		entry := host.Server{Command: o.Bin, Args: o.MCPArgs(), Env: o.MCPEnv(), Trust: true}
		if err := host.SetServer(p, d, path, serverPath, entry); err != nil {
			return err
		}
		for _, ev := range hookEvents {
			set := func() error { return host.SetHook(p, d, path, ev, o.Bin, name, hook) }
			if o.NoHook { // a hook an earlier setup added goes
				set = func() error { return host.RemoveHooks(p, d, path, ev, o.Bin, name) }
			}
			if err := set(); err != nil {
				return err
			}
		}
		return host.SetValue(p, d, path, []string{"useWriteTodos"}, false)
	})
	if err != nil {
		return nil, err
	}
	if !o.Uninstall {
		p.Note("Gemini CLI's own write_todos is off (\"useWriteTodos\": false in %s), so the model sees one list: ours", path)
	}
	return p, nil
}

// Check finds servers that run tasksessiond mcp under another name.
func (h Host) Check(o host.Options) []host.Finding {
	path := settingsFile(o)
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
			Problem: "the MCP server " + n + " in " + path + " also runs tasksessiond mcp: the model gets the tools twice, and the hooks name them mcp_" + Server + "_…",
			Fix:     "remove mcpServers." + n + " from " + path,
		})
	}
	return out
}
