package codex

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

var _ host.Doctor = Host{}

// tools are the Task tools as the server names them.
var tools = []string{"TaskCreate", "TaskList", "TaskGet", "TaskUpdate"}

// Check finds servers that run tasksessiond mcp under another name in the
// config.toml setup puts its server in: the model would get the tools
// twice.
func (h Host) Check(o host.Options) []host.Finding {
	f, err := files(o)
	if err != nil {
		return nil // the plan says why
	}
	path := f.serverTOML
	fix := func(n string) string { return "codex mcp remove " + n }
	if o.Project != "" {
		fix = func(n string) string { return "remove [mcp_servers." + n + "] from " + path }
	}
	s, err := readSettings(path)
	if err != nil {
		return []host.Finding{{Problem: host.Refuse(path, err).Error(), Fix: "repair the file, then: tasksessiond setup " + h.Name()}}
	}
	var out []host.Finding
	for _, n := range slices.Sorted(maps.Keys(s.Servers)) {
		if c := s.Servers[n]; n != Server && host.RunsTasksessiond(append([]string{c.Command}, c.Args...), o.Bin, "mcp") {
			out = append(out, host.Finding{Problem: "the MCP server " + n + " in " + path + " also runs tasksessiond mcp: the model gets the tools twice", Fix: fix(n)})
		}
	}
	return out
}

// Diagnose finds what keeps Codex from offering the tools though they are
// set up: a project (--project) it does not trust, whose .codex/ it then
// loads none of; hooks turned off under [features], so that the hook
// never runs; the server disabled ("enabled = false", which "codex mcp
// list" shows as disabled); or tools of it left out by disabled_tools or
// enabled_tools. It reads the user's config.toml and the project's layers
// over it in the working directory, as Codex does: doctor run in a
// trusted project once missed the server disabled there.
func (h Host) Diagnose(o host.Options) host.Diagnosis {
	d := host.Diagnosis{Installed: host.OnPath("codex") || host.Holds(home(o))}
	userTOML := filepath.Join(home(o), "config.toml")
	// One Codex cannot read: the plan names it when it is not TOML, Check
	// (without --project) when Codex refuses a value in it.
	user, err := readSettings(userTOML)
	if err != nil && o.Project != "" {
		if isTOML(userTOML) {
			d.Block(fmt.Sprintf("Codex cannot read %s (%v): it does not start", userTOML, err), "repair "+userTOML)
		}
		return d
	}
	layers := []string{userTOML}
	if dir, err := projectDir(host.ProjectDir(o)); err == nil {
		if level, key := user.trust(dir); o.Project != "" && level != "trusted" {
			f := distrust(userTOML, dir, level, key)
			d.Block(f.Problem, f.Fix)
		}
		layers = append(layers, user.layers(dir, home(o))...)
	}
	// Codex merges the layers, each key of the server's table taking the
	// last one's word; said is the file that said it.
	var merged server
	var said struct{ enabled, only, off string }
	var hooks, oldHooks *bool // features.hooks, features.codex_hooks
	var saidHooks, saidOld string
	for i, f := range layers {
		s, err := user, error(nil) // the user's, read above
		if i > 0 {
			s, err = readSettings(f)
		}
		if err != nil {
			d.Block(fmt.Sprintf("Codex cannot read the trusted project's %s (%v): it does not start", f, err), "repair "+f)
		}
		if h := s.Features.Hooks; h != nil {
			hooks, saidHooks = h, f
		}
		if h := s.Features.CodexHooks; h != nil {
			oldHooks, saidOld = h, f
		}
		c := s.Servers[Server]
		if c.Enabled != nil {
			merged.Enabled, said.enabled = c.Enabled, f
		}
		if c.EnabledTools != nil {
			merged.EnabledTools, said.only = c.EnabledTools, f
		}
		if c.DisabledTools != nil {
			merged.DisabledTools, said.off = c.DisabledTools, f
		}
	}
	if hooks == nil {
		hooks, saidHooks = oldHooks, saidOld
	}
	if hooks != nil && !*hooks && !o.NoHook {
		d.Block(fmt.Sprintf("hooks are turned off (hooks = false under [features] in %s): Codex runs no hook, so the list is not given back after resume or compaction", saidHooks),
			fmt.Sprintf("remove hooks = false (or codex_hooks = false) from [features] in %s", saidHooks))
	}
	if merged.Enabled != nil && !*merged.Enabled {
		d.Block(fmt.Sprintf("the MCP server %s is disabled (enabled = false under [mcp_servers.%s] in %s): Codex does not start it", Server, Server, said.enabled),
			fmt.Sprintf("remove enabled = false from [mcp_servers.%s] in %s", Server, said.enabled))
	}
	for _, t := range tools {
		var by string
		switch {
		case merged.DisabledTools != nil && slices.Contains(*merged.DisabledTools, t):
			by = said.off
		case merged.EnabledTools != nil && !slices.Contains(*merged.EnabledTools, t):
			by = said.only
		default:
			continue
		}
		d.Block(fmt.Sprintf("%s is left out of the server %s's tools (enabled_tools or disabled_tools under [mcp_servers.%s] in %s)", t, Server, Server, by),
			fmt.Sprintf("let %s through in [mcp_servers.%s] of %s", t, Server, by))
	}
	return d
}

// distrust is the finding for a project Codex does not trust (level
// "untrusted" under key, or "" none): it loads none of its .codex/.
func distrust(userTOML, dir, level, key string) host.Finding {
	why := "no trust for it in " + userTOML
	if level != "" {
		why = fmt.Sprintf("it is marked %s in %s", level, userTOML)
	}
	return host.Finding{
		Problem: fmt.Sprintf("Codex does not trust the project %s (%s): it loads nothing of %s, neither the server nor the hook, until you trust the project", key, why, filepath.Join(dir, ".codex")),
		Fix:     fmt.Sprintf("start Codex in %s and trust the folder, or set trust_level = \"trusted\" under [projects.%s] in %s", dir, tq(key), userTOML),
	}
}

// isTOML reports whether the file at path is TOML, whatever its values.
func isTOML(path string) bool {
	b, err := config.Read(path)
	var any map[string]any
	return err == nil && config.DecodeTOML(b, &any) == nil
}
