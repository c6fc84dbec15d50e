package copilot

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host"
)

var _ host.Doctor = Host{}

// Diagnose finds what keeps Copilot CLI (1.0.102) from offering the
// tools or running the hooks, in the files it reads: the server disabled
// ("copilot mcp disable": disabledMcpServers of its settings.json, which
// "copilot mcp list" shows), Task tools left out of the server's "tools"
// ("copilot mcp get" shows them). What it is started with
// (--disable-mcp-server, --excluded-tools, --available-tools) no file
// says; "disableAllHooks", in its settings.json or in a hooks file, does
// not keep it (1.0.102) from running setup's hooks.
func (Host) Diagnose(o host.Options) host.Diagnosis {
	d := host.Diagnosis{Installed: host.OnPath("copilot") || host.Holds(home(o))}
	f := filepath.Join(home(o), "settings.json")
	var s struct {
		DisabledMcpServers []string `json:"disabledMcpServers"`
	}
	if _, err := host.ReadJSON(f, &s); err != nil {
		d.Block("Copilot CLI cannot read "+err.Error(), "repair "+f)
	}
	if slices.Contains(s.DisabledMcpServers, Server) {
		d.Block(fmt.Sprintf(`the MCP server %s is disabled ("disabledMcpServers" in %s): Copilot CLI does not start it`, Server, f), "copilot mcp enable "+Server)
	}
	path, _ := files(o)
	var cfg struct {
		MCPServers map[string]struct {
			Tools *[]string `json:"tools"`
		} `json:"mcpServers"`
	}
	host.ReadJSON(path, &cfg) // Check names a file it cannot read
	if only := cfg.MCPServers[Server].Tools; only != nil && !slices.Contains(*only, "*") {
		var out []string
		for _, t := range []string{"TaskCreate", "TaskList", "TaskGet", "TaskUpdate"} {
			if !slices.Contains(*only, t) {
				out = append(out, t)
			}
		}
		if out != nil {
			d.Block(fmt.Sprintf(`"tools" of the MCP server %s in %s leaves out %s: Copilot CLI does not offer them`, Server, path, strings.Join(out, ", ")),
				fmt.Sprintf(`set "tools" of the MCP server %s to ["*"] in %s`, Server, path))
		}
	}
	return d
}
