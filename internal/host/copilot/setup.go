package copilot

import (
	"encoding/json"
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

// dialect is the MCP config's as Copilot CLI (1.0.102) reads it: the
// user's with comments and trailing commas, a project's strict JSON (one with a comment or a
// trailing comma it skips, "malformed", and starts none of its servers).
func dialect(o host.Options) config.Dialect {
	if o.Project != "" {
		return config.JSON
	}
	return config.JSONC
}

// ownTodos is what setup says of Copilot CLI's own to-do list.
const ownTodos = "Copilot CLI's own to-do list is a todos table of its built-in sql tool, which no setting turns off: " +
	"only starting it with --excluded-tools sql removes it (and the sql tool with it). For one list, ours: " +
	"alias copilot='copilot --excluded-tools sql'"

// hooksFile is the hooks file's content: Copilot CLI reads every file in
// its hooks directory, and this one, named for tasksessiond, is setup's
// whole.
type hooksFile struct {
	Version int                         `json:"version"`
	Hooks   map[string][]map[string]any `json:"hooks"`
}

// entries are Copilot CLI's setup: the MCP server "tasks" (every tool
// allowed) in the MCP config (comments allowed), and the hooks
// (sessionStart, userPromptSubmitted, preCompact, preMcpToolCall,
// postToolUse) in a hooks file of setup's own.
func (h Host) entries(o host.Options) []host.Entry {
	mcpPath, hooksPath := files(o)
	hook := map[string]any{"type": "command", "bash": host.Command(append([]string{o.Bin}, o.HookArgs(h.Name())...)...), "timeoutSec": hookTimeout}
	hooks := hooksFile{Version: 1, Hooks: map[string][]map[string]any{}}
	for _, ev := range HookEvents {
		hooks.Hooks[ev] = []map[string]any{hook}
	}
	b, _ := json.MarshalIndent(hooks, "", "  ")
	if b = append(b, '\n'); o.NoHook {
		b = nil
	}
	return []host.Entry{
		{File: mcpPath, Dialect: dialect(o), Kind: host.OwnServer, Path: []string{"mcpServers", Server},
			Value: host.Server{Type: "local", Command: o.Bin, Args: o.MCPArgs(), Env: o.MCPEnv(), Tools: []string{"*"}}},
		{File: hooksPath, Kind: host.OwnFile, Value: b, Earlier: func(old []byte) bool { return earlierHooks(old, o.Bin, h.Name()) }},
	}
}

// earlierHooks reports whether a hooks file is an earlier setup's: every
// hook in it a command hook that runs tasksessiond hook NAME (another
// --bin, --socket or --session), and nothing else.
func earlierHooks(b []byte, bin, name string) bool {
	var f hooksFile
	if json.Unmarshal(b, &f) != nil || f.Version != 1 || len(f.Hooks) == 0 {
		return false
	}
	for _, hooks := range f.Hooks {
		for _, h := range hooks {
			command, _ := h["bash"].(string)
			for k := range h {
				if k != "type" && k != "bash" && k != "timeoutSec" {
					return false
				}
			}
			if h["type"] != "command" || !host.RunsTasksessiond(host.Words(command), bin, "hook", name) {
				return false
			}
		}
	}
	return true
}

// Plan plans the entries.
func (h Host) Plan(o host.Options) (*host.Plan, error) {
	p, err := host.Declared(h, o, h.entries(o))
	if err == nil && !o.Uninstall {
		p.Note("%s", ownTodos)
	}
	return p, err
}

// Check finds servers that run tasksessiond mcp under another name.
func (h Host) Check(o host.Options) []host.Finding {
	path, _ := files(o)
	return host.OtherServers(h, o, path, dialect(o), []string{"mcpServers"}, Server,
		"also runs tasksessiond mcp: the model gets the tools twice, and the hooks name them "+Server+"-…",
		func(n string) string { return "remove mcpServers." + n + " from " + path })
}
