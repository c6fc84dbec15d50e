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
	user := filepath.Join(home(o), "config.toml")
	// the layers in order, each key of the server's table taking the
	// last file's word (Codex merges them so), and the file that said it
	type said struct {
		v    []string
		file string
	}
	var enabled, only, off *said
	for i, f := range append([]string{user}, projectLayers(o, user)...) {
		var cfg struct {
			Servers map[string]struct {
				Enabled       *bool     `toml:"enabled"`
				EnabledTools  *[]string `toml:"enabled_tools"`
				DisabledTools *[]string `toml:"disabled_tools"`
			} `toml:"mcp_servers"`
		}
		b, err := config.Read(f)
		if err == nil && b != nil {
			err = config.DecodeTOML(b, &cfg)
		}
		if err != nil && i > 0 { // the user's: Check names it
			d.Block(fmt.Sprintf("Codex cannot read the trusted project's %s (%v): it does not start", f, err), "repair "+f)
		}
		s, ok := cfg.Servers[Server]
		switch {
		case err != nil, !ok:
			continue
		case s.Enabled != nil && !*s.Enabled:
			enabled = &said{file: f}
		case s.Enabled != nil:
			enabled = nil
		}
		if s.EnabledTools != nil {
			only = &said{*s.EnabledTools, f}
		}
		if s.DisabledTools != nil {
			off = &said{*s.DisabledTools, f}
		}
	}
	if enabled != nil {
		d.Block(fmt.Sprintf("the MCP server %s is disabled (enabled = false under [mcp_servers.%s] in %s): Codex does not start it", Server, Server, enabled.file),
			fmt.Sprintf("remove enabled = false from [mcp_servers.%s] in %s", Server, enabled.file))
	}
	for _, t := range tools {
		var by *said
		switch {
		case off != nil && slices.Contains(off.v, t):
			by = off
		case only != nil && !slices.Contains(only.v, t):
			by = only
		default:
			continue
		}
		d.Block(fmt.Sprintf("%s is left out of the server %s's tools (enabled_tools or disabled_tools under [mcp_servers.%s] in %s)", t, Server, Server, by.file),
			fmt.Sprintf("let %s through in [mcp_servers.%s] of %s", t, Server, by.file))
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
	dir, err := projectDir(host.ProjectDir(o))
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
	dirs := host.Upward(dir, func(d string) bool { return d == root })
	var out []string
	for _, d := range slices.Backward(dirs) {
		if level, _ := trustLevel(userTOML, d); level == "trusted" && !same(filepath.Join(d, ".codex"), home(o)) {
			out = append(out, filepath.Join(d, ".codex", "config.toml"))
		}
	}
	return out
}
