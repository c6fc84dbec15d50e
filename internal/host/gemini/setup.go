package gemini

import (
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

// entries are Gemini CLI's setup, all in settings.json (comments
// allowed, trailing commas not: Gemini CLI strips comments, then
// JSON.parse): the MCP server "tasks", trusted (its calls need no
// confirmation each), the hooks, and "useWriteTodos": false (Gemini CLI's
// own write_todos off).
func (h Host) entries(o host.Options) []host.Entry {
	path := settingsFile(o)
	es := []host.Entry{{File: path, Dialect: config.JSONComments, Kind: host.OwnServer, Path: []string{"mcpServers", Server},
		Value: host.Server{Command: o.Bin, Args: o.MCPArgs(), Env: o.MCPEnv(), Trust: true}}}
	hook := host.HookGroup(host.Command(append([]string{o.Bin}, o.HookArgs(h.Name())...)...), "tasksessiond")
	for _, ev := range hookEvents {
		es = append(es, host.Entry{File: path, Dialect: config.JSONComments, Kind: host.OwnHook, Path: []string{"hooks", ev}, Value: hook})
	}
	return append(es, host.Entry{File: path, Dialect: config.JSONComments, Kind: host.UserValue, Path: []string{"useWriteTodos"}, Value: false})
}

// Plan plans the entries.
func (h Host) Plan(o host.Options) (*host.Plan, error) {
	user := o
	user.Project = ""
	if err := host.NotUsers(o, settingsFile(o), settingsFile(user)); err != nil {
		return nil, err
	}
	p, err := host.Declared(h, o, h.entries(o))
	if err == nil && !o.Uninstall {
		p.Note("Gemini CLI's own write_todos is off (\"useWriteTodos\": false in %s), so the model sees one list: ours", settingsFile(o))
	}
	return p, err
}

// Check finds servers that run tasksessiond mcp under another name.
func (h Host) Check(o host.Options) []host.Finding {
	path := settingsFile(o)
	return host.OtherServers(h, o, path, config.JSONComments, []string{"mcpServers"}, Server,
		"also runs tasksessiond mcp: the model gets the tools twice, and the hooks name them mcp_"+Server+"_…",
		func(n string) string { return "remove mcpServers." + n + " from " + path })
}
