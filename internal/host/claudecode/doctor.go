package claudecode

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/tasksessiond/tasksessiond/internal/host"
)

var _ host.Doctor = Host{}

// The repository's plugin (contrib/claude-code, listed by the marketplace
// in .claude-plugin/): Claude Code names its server plugin_<plugin>_<server>
// for permissions, plugin:<plugin>:<server> in /mcp.
const (
	plugin       = "tasksessiond"
	pluginServer = "plugin_" + plugin + "_" + Server
)

// managedSettings is the settings file an administrator keeps (Linux).
const managedSettings = "/etc/claude-code/managed-settings.json"

// settingsLayer is what doctor reads of one settings file.
type settingsLayer struct {
	path            string
	DisableAllHooks bool           `json:"disableAllHooks"`
	EnabledPlugins  map[string]any `json:"enabledPlugins"`
	Permissions     struct {
		Deny []string `json:"deny"`
	} `json:"permissions"`
	DisabledMcpjsonServers []string `json:"disabledMcpjsonServers"`
	Hooks                  map[string][]struct {
		Hooks []struct {
			Command string `json:"command"`
		} `json:"hooks"`
	} `json:"hooks"`
}

// servers is what doctor reads of a file of MCP servers (.mcp.json, the
// state file).
type servers struct {
	MCPServers map[string]*struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	} `json:"mcpServers"`
}

// Diagnose finds the plugin route (the repository's plugin enabled and
// installed), setup's own entries beside it, and what keeps Claude Code
// from offering the tools or running the hook: disableAllHooks, a deny
// rule for the server or its tools, the project's .mcp.json server
// rejected, the server disabled in /mcp.
func (h Host) Diagnose(o host.Options) host.Diagnosis {
	_, err := os.Stat(stateFile(o))
	d := host.Diagnosis{Installed: host.OnPath("claude") || host.Holds(configDir(o)) || err == nil}
	dir := host.ProjectDir(o)
	ls := layers(o, dir, &d)
	server := Server
	if id := pluginID(o, ls); id != "" {
		d.Route, server = "the plugin "+id, pluginServer
		duplicates(o, dir, ls, id, &d)
		if !host.OnPath(plugin) { // the plugin runs "tasksessiond" from PATH
			d.Block("the plugin runs tasksessiond from PATH, and there is none on PATH: its server and hook fail",
				"npm install -g tasksessiond (or put the tasksessiond binary on PATH)")
		}
	}
	// the project's .mcp.json server "tasks" (Claude Code starts none that
	// disabledMcpjsonServers names)
	project := slices.ContainsFunc(mcpFiles(dir), func(f string) bool {
		var v servers
		host.ReadJSON(f, &v)
		return v.MCPServers[Server] != nil
	})
	for _, l := range ls {
		if l.DisableAllHooks && !(o.NoHook && d.Route == "") {
			d.Block(fmt.Sprintf(`"disableAllHooks": true in %s: Claude Code runs no hook, so the list is not given back after resume, /clear or compaction`, l.path),
				fmt.Sprintf(`remove "disableAllHooks" from %s`, l.path))
		}
		for _, r := range l.Permissions.Deny {
			if p := "mcp__" + server; strings.TrimSpace(r) == p || strings.HasPrefix(strings.TrimSpace(r), p+"__") {
				d.Block(fmt.Sprintf("the deny rule %q in %s takes the Task tools (mcp__%s__…) from the model", r, l.path, server),
					fmt.Sprintf("remove %q from permissions.deny in %s", r, l.path))
			}
		}
		if d.Route == "" && project && slices.Contains(l.DisabledMcpjsonServers, Server) {
			d.Block(fmt.Sprintf("%q is in disabledMcpjsonServers in %s: Claude Code does not start the project's server %s", Server, l.path, Server),
				fmt.Sprintf("remove %q from disabledMcpjsonServers in %s", Server, l.path))
		}
	}
	if dir != "" {
		disabledInMCP(o, dir, d.Route != "", &d)
	}
	return d
}

// layers are the settings files Claude Code (2.1.328) reads in the
// folder dir it runs in, lowest first: the user's, the folder's
// .claude/settings.json and settings.local.json (those of the folder
// itself, not of the git root above it; in the home folder, whose
// .claude/settings.json is the user's, its settings.local.json still), the git root's
// settings.local.json (the repository's main folder's, unless that is
// the home folder), the managed ones.
func layers(o host.Options, dir string, d *host.Diagnosis) []settingsLayer {
	paths := []string{filepath.Join(configDir(o), "settings.json")}
	if dir != "" {
		if filepath.Join(dir, ".claude") != configDir(o) { // else it is the user's, read above
			paths = append(paths, filepath.Join(dir, ".claude", "settings.json"))
		}
		paths = append(paths, filepath.Join(dir, ".claude", "settings.local.json"))
		if root := projectKey(dir); root != projectKey(o.Home()) && root != host.RealPath(dir) && ownsRoot(root, euid()) {
			paths = append(paths, filepath.Join(root, ".claude", "settings.local.json"))
		}
	}
	var out []settingsLayer
	for _, p := range append(paths, managedSettings) {
		l := settingsLayer{path: p}
		if ok, err := host.ReadJSON(p, &l); err != nil {
			d.Block("Claude Code cannot read "+err.Error(), "repair "+p)
		} else if ok {
			out = append(out, l)
		}
	}
	return out
}

// euid is the user Claude Code runs as, as it takes it (process.geteuid).
var euid = os.Geteuid

// ownsRoot reports whether Claude Code (2.1.328, its jvl) reads the
// settings.local.json of the git root root from a folder below it: only
// if the user uid owns root, root/.git (not followed), and root/.claude
// (not followed) when there is one. Else it warns "not canonicalizing the
// consent store" and reads the folder's own only, so that another user's
// repository cannot give it settings. A .git that is not there, or a
// .claude it cannot look at for another reason than its absence, counts
// as not owned.
func ownsRoot(root string, uid int) bool {
	owned := func(fi fs.FileInfo, err error) bool {
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		return ok && int(st.Uid) == uid
	}
	if !owned(os.Stat(root)) || !owned(os.Lstat(filepath.Join(root, ".git"))) {
		return false
	}
	fi, err := os.Lstat(filepath.Join(root, ".claude"))
	return errors.Is(err, fs.ErrNotExist) || owned(fi, err)
}

// mcpFiles are the .mcp.json files Claude Code reads in the folder dir
// it runs in: that folder's and every one's above it.
func mcpFiles(dir string) (out []string) {
	if dir == "" {
		return nil
	}
	for _, d := range host.Upward(dir, nil) {
		out = append(out, filepath.Join(d, ".mcp.json"))
	}
	return out
}

// pluginID is the id ("tasksessiond@<marketplace>") of the repository's
// plugin when it is enabled (the last settings file that says wins) and
// installed; "" otherwise.
func pluginID(o host.Options, ls []settingsLayer) string {
	enabled := map[string]bool{}
	for _, l := range ls {
		for id, v := range l.EnabledPlugins {
			if name, _, _ := strings.Cut(id, "@"); name == plugin {
				enabled[id] = v != false && v != nil
			}
		}
	}
	var installed struct {
		Plugins map[string]any `json:"plugins"`
	}
	host.ReadJSON(filepath.Join(configDir(o), "plugins", "installed_plugins.json"), &installed)
	var ids []string
	for id, on := range enabled {
		if _, ok := installed.Plugins[id]; on && ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return append(ids, "")[0]
}

// duplicates finds setup's own server and hook beside the plugin: Claude
// Code shows one server of two that run the same command (the plugin's
// is hidden), and runs both hooks.
func duplicates(o host.Options, dir string, ls []settingsLayer, id string, d *host.Diagnosis) {
	dup := func(problem string) {
		d.Duplicates = append(d.Duplicates, host.Finding{Problem: problem,
			Fix: host.Command("tasksessiond", "setup", "claude-code", "--uninstall") + " (or, to keep setup's: claude plugin uninstall " + id + ")"})
	}
	for _, f := range append([]string{stateFile(o)}, mcpFiles(dir)...) {
		var v servers
		host.ReadJSON(f, &v)
		for _, n := range slices.Sorted(maps.Keys(v.MCPServers)) {
			if s := v.MCPServers[n]; s != nil && host.RunsTasksessiond(append([]string{s.Command}, s.Args...), o.Bin, "mcp") {
				dup(fmt.Sprintf("the MCP server %s in %s runs tasksessiond mcp beside the plugin %s: Claude Code shows the model one of the two, and the hooks name the tools of both", n, f, id))
			}
		}
	}
	for _, l := range ls {
		for _, g := range l.Hooks["SessionStart"] {
			for _, hk := range g.Hooks {
				if host.RunsTasksessiond(host.Words(hk.Command), o.Bin, "hook", "claude-code") {
					dup(fmt.Sprintf("the SessionStart hook %q in %s runs beside the plugin's own: the list is given twice", hk.Command, l.path))
				}
			}
		}
	}
}

// disabledInMCP finds the server turned off in /mcp for the project in
// dir (Claude Code keeps that in its state file, under the project).
func disabledInMCP(o host.Options, dir string, plugged bool, d *host.Diagnosis) {
	var v struct {
		Projects map[string]struct {
			DisabledMcpServers []string `json:"disabledMcpServers"`
		} `json:"projects"`
	}
	f := stateFile(o)
	host.ReadJSON(f, &v)
	name := Server
	if plugged {
		name = "plugin:" + plugin + ":" + Server
	}
	if dir = projectKey(dir); slices.Contains(v.Projects[dir].DisabledMcpServers, name) {
		d.Block(fmt.Sprintf("the MCP server %s is disabled for %s (projects[%q].disabledMcpServers in %s)", name, dir, dir, f),
			"enable "+name+" in Claude Code's /mcp, in "+dir)
	}
}

// projectKey is the key under which Claude Code (2.1.328) keeps the
// project dir in its state file's "projects": the git root holding dir
// (the folder with .git, a directory or a file), for a worktree the
// repository's main folder; dir itself (its real path) outside git. A
// server disabled in /mcp in a subfolder or a worktree is disabled under
// that key, for the whole repository. The same folder holds the
// settings.local.json Claude Code reads there.
func projectKey(dir string) string {
	dir = host.RealPath(dir)
	for _, p := range host.Upward(dir, nil) {
		if fi, err := os.Stat(filepath.Join(p, ".git")); err == nil {
			if fi.IsDir() {
				return p
			}
			return mainWorktree(p)
		}
	}
	return dir
}

// mainWorktree is the main folder of the repository whose worktree root
// (with a .git file, "gitdir: ...") is root: the folder of the common
// git directory its commondir names; root itself when there is none (a
// submodule, a gitdir that is gone).
func mainWorktree(root string) string {
	b, err := os.ReadFile(filepath.Join(root, ".git"))
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if err != nil || !ok {
		return root
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(root, gitdir)
	}
	c, err := os.ReadFile(filepath.Join(gitdir, "commondir"))
	common := strings.TrimSpace(string(c))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitdir, common)
	}
	if common = filepath.Clean(common); err != nil || filepath.Base(common) != ".git" {
		return root
	}
	return filepath.Dir(common)
}
