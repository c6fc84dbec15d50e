package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

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

// layers are the settings files Claude Code (2.1.328) reads in the
// folder dir it runs in, lowest first: the user's, the folder's
// .claude/settings.json and settings.local.json (those of the folder
// itself, not of the git root above it), the git root's
// settings.local.json (the repository's main folder's, unless that is
// the home folder), the managed ones.
func layers(o host.Options) ([]settingsLayer, []host.Finding) {
	dir := host.ProjectDir(o)
	paths := []string{filepath.Join(configDir(o), "settings.json")}
	if dir != "" && filepath.Join(dir, ".claude") != configDir(o) {
		paths = append(paths, filepath.Join(dir, ".claude", "settings.json"), filepath.Join(dir, ".claude", "settings.local.json"))
		if root := projectKey(dir); root != projectKey(o.Home()) && root != realPath(dir) {
			paths = append(paths, filepath.Join(root, ".claude", "settings.local.json"))
		}
	}
	paths = append(paths, managedSettings)
	var out []settingsLayer
	var bad []host.Finding
	for _, p := range paths {
		l := settingsLayer{path: p}
		ok, err := host.ReadJSON(p, &l)
		if err != nil {
			bad = append(bad, host.Finding{Problem: "Claude Code cannot read " + err.Error(), Fix: "repair " + p})
			continue
		}
		if ok {
			out = append(out, l)
		}
	}
	return out, bad
}

// mcpFiles are the .mcp.json files Claude Code reads in the folder it
// runs in: that folder's and every one's above it.
func mcpFiles(o host.Options) []string {
	dir := host.ProjectDir(o)
	if dir == "" {
		return nil
	}
	var out []string
	for _, d := range host.Upward(dir, nil) {
		out = append(out, filepath.Join(d, ".mcp.json"))
	}
	return out
}

// Diagnose finds the plugin route (the repository's plugin enabled and
// installed), setup's own entries beside it, and what keeps Claude Code
// from offering the tools or running the hook: disableAllHooks, a deny
// rule for the server or its tools, the project's .mcp.json server
// rejected, the server disabled in /mcp.
func (h Host) Diagnose(o host.Options) host.Diagnosis {
	d := host.Diagnosis{Installed: host.OnPath("claude") || host.Holds(configDir(o)) || exists(stateFile(o))}
	ls, bad := layers(o)
	d.Blocked = bad
	server := Server
	if id := pluginID(o, ls); id != "" {
		d.Route = "the plugin " + id
		server = pluginServer
		d.Duplicates = duplicates(o, ls, id)
		if !host.OnPath(plugin) { // the plugin runs "tasksessiond" from PATH
			d.Blocked = append(d.Blocked, host.Finding{
				Problem: "the plugin runs tasksessiond from PATH, and there is none on PATH: its server and hook fail",
				Fix:     "npm install -g tasksessiond (or put the tasksessiond binary on PATH)",
			})
		}
	}
	for _, l := range ls {
		if l.DisableAllHooks && !(o.NoHook && d.Route == "") {
			d.Blocked = append(d.Blocked, host.Finding{
				Problem: fmt.Sprintf(`"disableAllHooks": true in %s: Claude Code runs no hook, so the list is not given back after resume, /clear or compaction`, l.path),
				Fix:     fmt.Sprintf(`remove "disableAllHooks" from %s`, l.path),
			})
		}
		for _, r := range l.Permissions.Deny {
			if denies(r, server) {
				d.Blocked = append(d.Blocked, host.Finding{
					Problem: fmt.Sprintf("the deny rule %q in %s takes the Task tools (mcp__%s__…) from the model", r, l.path, server),
					Fix:     fmt.Sprintf("remove %q from permissions.deny in %s", r, l.path),
				})
			}
		}
	}
	if d.Route == "" {
		d.Blocked = append(d.Blocked, rejected(o, ls)...)
	}
	d.Blocked = append(d.Blocked, disabledInMCP(o, d.Route != "")...)
	return d
}

// denies reports whether the permission rule r takes server's tools (or
// one of them) from the model.
func denies(r, server string) bool {
	r = strings.TrimSpace(r)
	p := "mcp__" + server
	return r == p || r == p+"__*" || strings.HasPrefix(r, p+"__")
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
	sort.Strings(ids)
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// duplicates are setup's own server and hook beside the plugin: Claude
// Code shows one server of two that run the same command (the plugin's
// is hidden), and runs both hooks.
func duplicates(o host.Options, ls []settingsLayer, id string) []host.Finding {
	fix := host.Command("tasksessiond", "setup", "claude-code", "--uninstall") + " (or, to keep setup's: claude plugin uninstall " + id + ")"
	var out []host.Finding
	for _, f := range append([]string{stateFile(o)}, mcpFiles(o)...) {
		var v struct {
			MCPServers map[string]struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"mcpServers"`
		}
		if ok, _ := host.ReadJSON(f, &v); !ok {
			continue
		}
		for _, n := range sortedKeys(v.MCPServers) {
			s := v.MCPServers[n]
			if host.RunsTasksessiond(append([]string{s.Command}, s.Args...), o.Bin, "mcp") {
				out = append(out, host.Finding{
					Problem: fmt.Sprintf("the MCP server %s in %s runs tasksessiond mcp beside the plugin %s: Claude Code shows the model one of the two, and the hooks name the tools of both", n, f, id),
					Fix:     fix,
				})
			}
		}
	}
	for _, l := range ls {
		for _, g := range l.Hooks["SessionStart"] {
			for _, hk := range g.Hooks {
				if host.RunsTasksessiond(host.Words(hk.Command), o.Bin, "hook", "claude-code") {
					out = append(out, host.Finding{
						Problem: fmt.Sprintf("the SessionStart hook %q in %s runs beside the plugin's own: the list is given twice", hk.Command, l.path),
						Fix:     fix,
					})
				}
			}
		}
	}
	return out
}

// rejected finds the project's .mcp.json server "tasks" rejected by
// disabledMcpjsonServers (Claude Code starts none it names).
func rejected(o host.Options, ls []settingsLayer) []host.Finding {
	if !slices.ContainsFunc(mcpFiles(o), func(f string) bool {
		var v struct {
			MCPServers map[string]any `json:"mcpServers"`
		}
		host.ReadJSON(f, &v)
		return v.MCPServers[Server] != nil
	}) {
		return nil
	}
	var out []host.Finding
	for _, l := range ls {
		if slices.Contains(l.DisabledMcpjsonServers, Server) {
			out = append(out, host.Finding{
				Problem: fmt.Sprintf("%q is in disabledMcpjsonServers in %s: Claude Code does not start the project's server %s", Server, l.path, Server),
				Fix:     fmt.Sprintf("remove %q from disabledMcpjsonServers in %s", Server, l.path),
			})
		}
	}
	return out
}

// disabledInMCP finds the server turned off in /mcp for the project
// (Claude Code keeps that in its state file, under the project).
func disabledInMCP(o host.Options, plugged bool) []host.Finding {
	dir := host.ProjectDir(o)
	if dir == "" {
		return nil
	}
	var v struct {
		Projects map[string]struct {
			DisabledMcpServers []string `json:"disabledMcpServers"`
		} `json:"projects"`
	}
	f := stateFile(o)
	if ok, _ := host.ReadJSON(f, &v); !ok {
		return nil
	}
	name := Server
	if plugged {
		name = "plugin:" + plugin + ":" + Server
	}
	dir = projectKey(dir)
	if !slices.Contains(v.Projects[dir].DisabledMcpServers, name) {
		return nil
	}
	return []host.Finding{{
		Problem: fmt.Sprintf("the MCP server %s is disabled for %s (projects[%q].disabledMcpServers in %s)", name, dir, dir, f),
		Fix:     "enable " + name + " in Claude Code's /mcp, in " + dir,
	}}
}

// projectKey is the key under which Claude Code (2.1.328) keeps the
// project dir in its state file's "projects": the git root holding dir
// (the folder with .git, a directory or a file), for a worktree the
// repository's main folder; dir itself (its real path) outside git. A
// server disabled in /mcp in a subfolder or a worktree is disabled under
// that key, for the whole repository.
func projectKey(dir string) string {
	dir = realPath(dir)
	for p := dir; ; p = filepath.Dir(p) {
		fi, err := os.Stat(filepath.Join(p, ".git"))
		if err == nil {
			if fi.IsDir() {
				return p
			}
			return mainWorktree(p)
		}
		if filepath.Dir(p) == p {
			return dir
		}
	}
}

// mainWorktree is the main folder of the repository whose worktree root
// (with a .git file, "gitdir: ...") is root: the folder of the common
// git directory its commondir names; root itself when there is none (a
// submodule, a gitdir that is gone).
func mainWorktree(root string) string {
	b, err := os.ReadFile(filepath.Join(root, ".git"))
	if err != nil {
		return root
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return root
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(root, gitdir)
	}
	c, err := os.ReadFile(filepath.Join(gitdir, "commondir"))
	if err != nil {
		return root
	}
	common := strings.TrimSpace(string(c))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitdir, common)
	}
	common = filepath.Clean(common)
	if filepath.Base(common) != ".git" {
		return root
	}
	return filepath.Dir(common)
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
