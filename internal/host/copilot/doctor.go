package copilot

import (
	"encoding/json"
	"fmt"
	"os"
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
// says; a workspace's server of the same name overrides the user's (and
// setup's --project, in .github/mcp.json, a nearer .mcp.json's); "disableAllHooks", in its settings.json or in a hooks file, does
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
	var cfg mcpConfig
	host.ReadJSON(path, &cfg) // Check names a file it cannot read
	if dir := host.RealPath(host.ProjectDir(o)); o.Project != "" && !trusted(o, dir) {
		trust := filepath.Join(home(o), "config.json")
		d.Block(fmt.Sprintf("Copilot CLI reads %s only in a folder it trusts, and %s is not in trusted_folders of %s (nor is COPILOT_ALLOW_ALL true): it starts none of the project's servers or hooks there", path, dir, trust),
			fmt.Sprintf("start copilot in %s and trust the folder when it asks", dir))
	}
	if ws, wcfg := workspaceServer(o); ws != "" && host.RealPath(ws) != host.RealPath(path) {
		s := wcfg.MCPServers[Server]
		if !host.RunsTasksessiond(append([]string{s.Command}, s.Args...), o.Bin, "mcp") {
			d.Block(fmt.Sprintf("the MCP server %s in %s, which does not run tasksessiond mcp, overrides setup's: Copilot CLI starts that one in this folder", Server, ws),
				fmt.Sprintf("remove mcpServers.%s from %s, or rename it", Server, ws))
		}
		path, cfg = ws, wcfg
	}
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

// mcpConfig is what doctor reads of an MCP config file.
type mcpConfig struct {
	MCPServers map[string]struct {
		Command string    `json:"command"`
		Args    []string  `json:"args"`
		Tools   *[]string `json:"tools"`
	} `json:"mcpServers"`
}

// workspaceServer finds the workspace's MCP config file (and reads it)
// whose server named Server Copilot CLI (1.0.102) starts in place of the
// user's: in a folder it trusts ("trusted_folders" of its config.json
// hold it), the nearest of the folder and those above it up to the git
// repository's root (no repository: the folder alone), .mcp.json before
// .github/mcp.json. None: "".
func workspaceServer(o host.Options) (string, mcpConfig) {
	dir := host.RealPath(host.ProjectDir(o))
	if dir == "" || !trusted(o, dir) {
		return "", mcpConfig{}
	}
	dirs := host.Upward(dir, func(d string) bool { _, err := os.Stat(filepath.Join(d, ".git")); return err == nil })
	if _, err := os.Stat(filepath.Join(dirs[len(dirs)-1], ".git")); err != nil {
		dirs = dirs[:1] // no repository
	}
	for _, d := range dirs {
		for _, p := range []string{filepath.Join(d, ".mcp.json"), filepath.Join(d, ".github", "mcp.json")} {
			var cfg mcpConfig
			b, _ := os.ReadFile(p) // strict JSON: one it cannot parse it skips
			if json.Unmarshal(b, &cfg); cfg.MCPServers != nil {
				if _, ok := cfg.MCPServers[Server]; ok {
					return p, cfg
				}
			}
		}
	}
	return "", mcpConfig{}
}

// trusted reports whether Copilot CLI (1.0.102) reads the workspace's
// files in dir: COPILOT_ALLOW_ALL is "true", or dir is, or is under, one of
// "trusted_folders" in its config.json (where it keeps the folders the
// user trusted when it asked).
func trusted(o host.Options, dir string) bool {
	if o.Env("COPILOT_ALLOW_ALL") == "true" {
		return true
	}
	var c struct {
		Trusted []string `json:"trusted_folders"`
	}
	host.ReadJSON(filepath.Join(home(o), "config.json"), &c)
	return slices.ContainsFunc(c.Trusted, func(t string) bool {
		rel, err := filepath.Rel(host.RealPath(t), dir)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
	})
}
