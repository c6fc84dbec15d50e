package codex

import (
	"fmt"
	"os"
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
	user := filepath.Join(home(o), "config.toml")
	files := append([]string{user}, projectLayers(o, user)...)
	// the layers in order, each key of the server's table taking the
	// last file's word (Codex merges them so)
	var enabled, enabledTools, disabledTools struct {
		set  bool
		file string
	}
	var on bool
	var only, off []string
	for i, f := range files {
		b, err := config.Read(f)
		if err == nil && b != nil {
			err = config.DecodeTOML(b, &struct{}{})
		}
		if err != nil && i > 0 { // the user's: Check names it
			d.Blocked = append(d.Blocked, host.Finding{
				Problem: fmt.Sprintf("Codex cannot read the trusted project's %s (%v): it does not start", f, err),
				Fix:     "repair " + f,
			})
		}
		if err != nil || b == nil {
			continue
		}
		var cfg struct {
			Servers map[string]struct {
				Enabled       *bool     `toml:"enabled"`
				EnabledTools  *[]string `toml:"enabled_tools"`
				DisabledTools *[]string `toml:"disabled_tools"`
			} `toml:"mcp_servers"`
		}
		if config.DecodeTOML(b, &cfg) != nil {
			continue // Check names a file Codex cannot read
		}
		s, ok := cfg.Servers[Server]
		if !ok {
			continue
		}
		if s.Enabled != nil {
			enabled.set, enabled.file, on = true, f, *s.Enabled
		}
		if s.EnabledTools != nil {
			enabledTools.set, enabledTools.file, only = true, f, *s.EnabledTools
		}
		if s.DisabledTools != nil {
			disabledTools.set, disabledTools.file, off = true, f, *s.DisabledTools
		}
	}
	if enabled.set && !on {
		d.Blocked = append(d.Blocked, host.Finding{
			Problem: fmt.Sprintf("the MCP server %s is disabled (enabled = false under [mcp_servers.%s] in %s): Codex does not start it", Server, Server, enabled.file),
			Fix:     fmt.Sprintf("remove enabled = false from [mcp_servers.%s] in %s", Server, enabled.file),
		})
	}
	for _, t := range tools {
		f := ""
		switch {
		case disabledTools.set && slices.Contains(off, t):
			f = disabledTools.file
		case enabledTools.set && !slices.Contains(only, t):
			f = enabledTools.file
		default:
			continue
		}
		d.Blocked = append(d.Blocked, host.Finding{
			Problem: fmt.Sprintf("%s is left out of the server %s's tools (enabled_tools or disabled_tools under [mcp_servers.%s] in %s)", t, Server, Server, f),
			Fix:     fmt.Sprintf("let %s through in [mcp_servers.%s] of %s", t, Server, f),
		})
	}
	return d
}

// projectLayers are the project's config.toml files Codex (0.169.0)
// reads over the user's (userTOML) in the working directory (o.Project,
// else the current one), lowest first: the .codex/config.toml of each
// directory from the project's root down to it, each only where Codex
// trusts that directory. Doctor run in a trusted project once missed the
// server disabled there.
func projectLayers(o host.Options, userTOML string) []string {
	dir := o.Project
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil
		}
		dir = wd
	}
	dir, err := projectDir(dir)
	if err != nil {
		return nil
	}
	markers := []string{".git"}
	if b, err := config.Read(userTOML); err == nil && b != nil {
		var cfg struct {
			Markers *[]string `toml:"project_root_markers"`
		}
		if config.DecodeTOML(b, &cfg) == nil && cfg.Markers != nil {
			markers = *cfg.Markers
		}
	}
	root := projectRoot(dir, markers)
	var dirs []string
	for d := dir; ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == root || filepath.Dir(d) == d {
			break
		}
	}
	var out []string
	for i := len(dirs) - 1; i >= 0; i-- {
		dotCodex := filepath.Join(dirs[i], ".codex")
		if same(dotCodex, home(o)) {
			continue // the user's own, read as such
		}
		if level, _ := trustLevel(userTOML, dirs[i]); level == "trusted" {
			out = append(out, filepath.Join(dotCodex, "config.toml"))
		}
	}
	return out
}
