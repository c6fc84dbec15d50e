package codex

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

var _ host.Doctor = Host{}

// tools are the Task tools as the server names them.
var tools = []string{"TaskCreate", "TaskList", "TaskGet", "TaskUpdate"}

// Diagnose finds what keeps Codex from offering the tools though they are
// set up: the server disabled ("enabled = false", which "codex mcp list"
// shows as disabled), or tools of it left out by disabled_tools or
// enabled_tools.
func (h Host) Diagnose(o host.Options) host.Diagnosis {
	d := host.Diagnosis{Installed: host.OnPath("codex") || host.Holds(home(o))}
	files := []string{filepath.Join(home(o), "config.toml")}
	if o.Project != "" {
		if dir, err := projectDir(o.Project); err == nil {
			files = append(files, filepath.Join(dir, ".codex", "config.toml"))
		}
	}
	for _, f := range files {
		b, err := config.Read(f)
		if err != nil || b == nil {
			continue
		}
		var cfg struct {
			Servers map[string]struct {
				Enabled       *bool    `toml:"enabled"`
				EnabledTools  []string `toml:"enabled_tools"`
				DisabledTools []string `toml:"disabled_tools"`
			} `toml:"mcp_servers"`
		}
		if config.DecodeTOML(b, &cfg) != nil {
			continue // Check names a file Codex cannot read
		}
		s, ok := cfg.Servers[Server]
		if !ok {
			continue
		}
		if s.Enabled != nil && !*s.Enabled {
			d.Blocked = append(d.Blocked, host.Finding{
				Problem: fmt.Sprintf("the MCP server %s is disabled (enabled = false under [mcp_servers.%s] in %s): Codex does not start it", Server, Server, f),
				Fix:     fmt.Sprintf("remove enabled = false from [mcp_servers.%s] in %s", Server, f),
			})
		}
		for _, t := range tools {
			off := slices.Contains(s.DisabledTools, t) || s.EnabledTools != nil && !slices.Contains(s.EnabledTools, t)
			if off {
				d.Blocked = append(d.Blocked, host.Finding{
					Problem: fmt.Sprintf("%s is left out of the server %s's tools (enabled_tools or disabled_tools under [mcp_servers.%s] in %s)", t, Server, Server, f),
					Fix:     fmt.Sprintf("let %s through in [mcp_servers.%s] of %s", t, Server, f),
				})
			}
		}
	}
	return d
}
