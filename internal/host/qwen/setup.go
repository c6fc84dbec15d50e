package qwen

import (
	"path/filepath"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// Server is the MCP server's name setup gives it: Qwen Code's model
// reaches the tools as mcp__tasks__TaskCreate and so on.
const Server = "tasks"

// hookEvents are the events the hook serves.
var hookEvents = []string{"SessionStart"}

// settingsFile is Qwen Code's settings.json: in its home, or a project's
// .qwen.
func settingsFile(o host.Options) string {
	if o.Project != "" {
		return filepath.Join(o.Project, ".qwen", "settings.json")
	}
	return filepath.Join(home(o), "settings.json")
}

// entries are Qwen Code's setup, all in settings.json (comments
// allowed): the MCP server "tasks", trusted (its calls need no
// confirmation each), and the SessionStart hook.
func (h Host) entries(o host.Options) []host.Entry {
	path := settingsFile(o)
	es := []host.Entry{{File: path, Dialect: config.JSONComments, Kind: host.OwnServer, Path: []string{"mcpServers", Server},
		Value: host.Server{Command: o.Bin, Args: o.MCPArgs(), Env: o.MCPEnv(), Trust: true}}}
	hook := host.HookGroup(host.Command(append([]string{o.Bin}, o.HookArgs(h.Name())...)...), "")
	for _, ev := range hookEvents {
		es = append(es, host.Entry{File: path, Dialect: config.JSONComments, Kind: host.OwnHook, Path: []string{"hooks", ev}, Value: hook})
	}
	return es
}

// Plan plans the entries. Qwen Code's own todo_write is off unless
// tools.todoWrite.enabled: setup leaves it so and says so.
func (h Host) Plan(o host.Options) (*host.Plan, error) {
	user := o
	user.Project = ""
	if err := host.NotUsers(o, settingsFile(o), settingsFile(user)); err != nil {
		return nil, err
	}
	p, err := host.Declared(h, o, h.entries(o))
	if d := configured(o); err == nil && !o.Uninstall && o.Project == "" && d != "" && !tilde(d) && !filepath.IsAbs(d) {
		p.Note("QWEN_HOME (%s) is relative: Qwen Code takes it from the folder each session starts in, so it reads %s only when started in %s; set QWEN_HOME to an absolute path", d, home(o), host.ProjectDir(o))
	}
	if err == nil && !o.Uninstall {
		p.Note("Qwen Code's own todo_write stays off (it is unless tools.todoWrite.enabled is true in %s): leave it so, and the model sees one list, ours", settingsFile(o))
	}
	return p, err
}

// Check finds servers that run tasksessiond mcp under another name, and
// Qwen Code's own to-do tool turned on.
func (h Host) Check(o host.Options) []host.Finding {
	path := settingsFile(o)
	out := host.OtherServers(h, o, path, config.JSONComments, []string{"mcpServers"}, Server,
		"also runs tasksessiond mcp: the model gets the tools twice, and the hook names them mcp__"+Server+"__…",
		func(n string) string { return "remove mcpServers." + n + " from " + path })
	var s struct {
		Tools struct{ TodoWrite struct{ Enabled bool } }
	}
	if ok, _ := host.ReadJSON(path, &s); ok && s.Tools.TodoWrite.Enabled {
		out = append(out, host.Finding{
			Problem: "Qwen Code's own todo_write is on (tools.todoWrite.enabled in " + path + "): the model sees two to-do lists",
			Fix:     "set tools.todoWrite.enabled to false in " + path,
		})
	}
	return out
}
