package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/host"
)

// runIn runs tasksessiond as run does, in the directory dir, with env
// added (and without run's trust of the folder by Gemini CLI).
func (e setupEnv) runIn(t *testing.T, dir string, env []string, args ...string) (stdout string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = bareEnv(append([]string{"HOME=" + e.home, "PATH=" + filepath.Dir(e.bin) + ":/usr/bin:/bin", "TASKSESSIOND_SOCKET=" + e.socket}, env...)...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if x, ok := err.(*exec.ExitError); ok {
		code = x.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return out.String(), code
}

// trust is the environment under which Gemini CLI trusts any folder.
var trust = []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}

func TestDoctorNamesWhatTurnsTheToolsOff(t *testing.T) {
	// Ensures doctor, after a setup the host would read, reports each
	// setting of the host's own that keeps it from offering the tools or
	// running the hook (exit 1), naming the setting's file and the fix;
	// and says "set up" again once the setting is gone.
	for _, c := range []struct {
		name, host string
		project    bool              // setup and doctor with --project
		files      map[string]string // relative to the project (or, with "~/", HOME)
		env        []string
		problem    string
		fix        string
	}{
		{name: "ClaudeDisableAllHooks", host: "claude-code",
			files:   map[string]string{".claude/settings.local.json": `{"disableAllHooks": true}`},
			problem: `"disableAllHooks": true in {project}/.claude/settings.local.json: Claude Code runs no hook`,
			fix:     `remove "disableAllHooks" from {project}/.claude/settings.local.json`},
		{name: "ClaudeDenyServer", host: "claude-code",
			files:   map[string]string{".claude/settings.json": `{"permissions": {"deny": ["mcp__tasks"]}}`},
			problem: `the deny rule "mcp__tasks" in {project}/.claude/settings.json takes the Task tools`,
			fix:     `remove "mcp__tasks" from permissions.deny in {project}/.claude/settings.json`},
		{name: "ClaudeDenyTool", host: "claude-code",
			files:   map[string]string{".claude/settings.json": `{"permissions": {"deny": ["mcp__tasks__TaskCreate"]}}`},
			problem: `the deny rule "mcp__tasks__TaskCreate"`},
		{name: "ClaudeRejectedProjectServer", host: "claude-code", project: true,
			files:   map[string]string{".claude/settings.local.json": `{"disabledMcpjsonServers": ["tasks"]}`},
			problem: `"tasks" is in disabledMcpjsonServers in {project}/.claude/settings.local.json`,
			fix:     `remove "tasks" from disabledMcpjsonServers in {project}/.claude/settings.local.json`},
		{name: "ClaudeDisabledInMCP", host: "claude-code",
			files:   map[string]string{"~/.claude.json": `{"projects": {"{project}": {"disabledMcpServers": ["tasks"]}}}`},
			problem: `the MCP server tasks is disabled for {project}`},
		{name: "GeminiExcluded", host: "gemini", env: trust,
			files:   map[string]string{".gemini/settings.json": `{"mcp": {"excluded": ["tasks"]}}`},
			problem: `mcp.excluded in {project}/.gemini/settings.json names the server tasks`,
			fix:     `remove "tasks" from mcp.excluded in {project}/.gemini/settings.json`},
		{name: "GeminiNotAllowed", host: "gemini", env: trust,
			files:   map[string]string{".gemini/settings.json": `{"mcp": {"allowed": ["other"]}}`},
			problem: `mcp.allowed in {project}/.gemini/settings.json leaves out the server tasks`},
		// a trusted workspace's server of the same name is the one it
		// starts ("gemini mcp list": tasks: echo)
		{name: "GeminiWorkspaceServerOverrides", host: "gemini", env: trust,
			files:   map[string]string{".gemini/settings.json": `{"mcpServers": {"tasks": {"command": "echo"}}}`},
			problem: `the MCP server tasks in {project}/.gemini/settings.json, which does not run tasksessiond mcp, overrides setup's: Gemini CLI starts that one in {project}`,
			fix:     `remove mcpServers.tasks from {project}/.gemini/settings.json`},
		{name: "GeminiUntrustedFolder", host: "gemini",
			problem: `Gemini CLI does not trust the folder {project} (no rule for it in ~/.gemini/trustedFolders.json): it starts no MCP server there`,
			fix:     `"{project}": "TRUST_FOLDER" to ~/.gemini/trustedFolders.json`},
		{name: "GeminiDistrustedFolder", host: "gemini",
			files:   map[string]string{"~/.gemini/trustedFolders.json": `{"{project}": "TRUST_FOLDER", "{project}/sub": "DO_NOT_TRUST"}`},
			problem: `Gemini CLI does not trust the folder {project}/sub (DO_NOT_TRUST in ~/.gemini/trustedFolders.json)`},
		{name: "GeminiHooksOff", host: "gemini", env: trust,
			files:   map[string]string{".gemini/settings.json": `{"hooksConfig": {"enabled": false}}`},
			problem: `"hooksConfig": {"enabled": false} in {project}/.gemini/settings.json: Gemini CLI runs no hook`},
		{name: "GeminiDisabled", host: "gemini", env: trust,
			files:   map[string]string{"~/.gemini/mcp-server-enablement.json": `{"tasks": {"enabled": false}}`},
			problem: `the server tasks is disabled (~/.gemini/mcp-server-enablement.json)`,
			fix:     `gemini mcp enable tasks`},
		{name: "OpenCodeToolOff", host: "opencode",
			files:   map[string]string{"~/.config/opencode/opencode.json": `{"tools": {"todowrite": false, "todoread": false, "TaskUpdate": false}}`},
			problem: `"tools": {"TaskUpdate": false} in ~/.config/opencode/opencode.json: OpenCode does not offer the plugin's TaskUpdate`},
		// OpenCode 1.18.33 takes "tools" and "permission" names as
		// wildcards, and reads the project's opencode.json without
		// --project ("opencode debug agent build" shows each off);
		// doctor once said "set up" for each of these
		{name: "OpenCodeToolsWildcard", host: "opencode",
			files:   map[string]string{"~/.config/opencode/opencode.json": `{"tools": {"Task*": false, "TaskList": true}}`},
			problem: `"tools": {"Task*": false} in ~/.config/opencode/opencode.json: OpenCode does not offer the plugin's TaskGet`,
			fix:     `remove "Task*" from "tools" in ~/.config/opencode/opencode.json`},
		{name: "OpenCodePermissionDeny", host: "opencode",
			files:   map[string]string{"~/.config/opencode/opencode.json": `{"permission": {"TaskCreate": "deny"}}`},
			problem: `"permission": {"TaskCreate": "deny"} in ~/.config/opencode/opencode.json: OpenCode does not offer the plugin's TaskCreate`,
			fix:     `remove "TaskCreate" from "permission" in ~/.config/opencode/opencode.json`},
		{name: "OpenCodeProjectToolOff", host: "opencode",
			files:   map[string]string{"opencode.json": `{"tools": {"*": false}}`},
			problem: `"tools": {"*": false} in {project}/opencode.json: OpenCode does not offer the plugin's TaskCreate`},
		// Qwen Code 0.24.4: its folder trust is off unless turned on,
		// its mcp.excluded and mcp.allowed take wildcards, and
		// disableAllHooks turns the hooks off ("qwen mcp reconnect --all"
		// says why it skips the server)
		{name: "QwenExcluded", host: "qwen",
			files:   map[string]string{".qwen/settings.json": `{"mcp": {"excluded": ["ta*"]}}`},
			problem: `mcp.excluded in {project}/.qwen/settings.json names the server tasks: Qwen Code does not start it`,
			fix:     `remove "ta*" from mcp.excluded in {project}/.qwen/settings.json`},
		{name: "QwenNotAllowed", host: "qwen",
			files:   map[string]string{"~/.qwen/settings.json": `{"mcp": {"allowed": ["other"]}}`},
			problem: `mcp.allowed in ~/.qwen/settings.json leaves out the server tasks`,
			fix:     `add "tasks" to mcp.allowed in ~/.qwen/settings.json`},
		{name: "QwenHooksOff", host: "qwen",
			files:   map[string]string{"~/.qwen/settings.json": `{"disableAllHooks": true}`},
			problem: `"disableAllHooks": true in ~/.qwen/settings.json: Qwen Code runs no hook`,
			fix:     `remove "disableAllHooks" from ~/.qwen/settings.json`},
		{name: "QwenDistrustedFolder", host: "qwen",
			files: map[string]string{"~/.qwen/settings.json": `{"security": {"folderTrust": {"enabled": true}}}`,
				"~/.qwen/trustedFolders.json": `{"{project}": "TRUST_FOLDER", "{project}/sub": "DO_NOT_TRUST"}`},
			problem: `Qwen Code does not trust the folder {project}/sub (DO_NOT_TRUST in ~/.qwen/trustedFolders.json): it starts no MCP server there`},
		{name: "QwenUntrustedFolder", host: "qwen",
			files:   map[string]string{"~/.qwen/settings.json": `{"security": {"folderTrust": {"enabled": true}}}`},
			problem: `Qwen Code does not trust the folder {project} (no rule for it in ~/.qwen/trustedFolders.json)`,
			fix:     `"{project}": "TRUST_FOLDER" to ~/.qwen/trustedFolders.json`},
		// Copilot CLI 1.0.102: "copilot mcp disable" and the server's
		// "tools" ("copilot mcp list" and "copilot mcp get" show them)
		{name: "CopilotServerDisabled", host: "copilot",
			files:   map[string]string{"~/.copilot/settings.json": `{"disabledMcpServers": ["tasks"]}`},
			problem: `the MCP server tasks is disabled ("disabledMcpServers" in ~/.copilot/settings.json): Copilot CLI does not start it`,
			fix:     `copilot mcp enable tasks`},
		{name: "CopilotToolsLeftOut", host: "copilot",
			files:   map[string]string{"~/.copilot/mcp-config.json": `{"mcpServers": {"tasks": {"type": "local", "command": "{bin}", "args": ["mcp"], "tools": ["TaskList", "TaskGet"]}}}`},
			problem: `"tools" of the MCP server tasks in ~/.copilot/mcp-config.json leaves out TaskCreate, TaskUpdate: Copilot CLI does not offer them`,
			fix:     `set "tools" of the MCP server tasks to ["*"] in ~/.copilot/mcp-config.json`},
		// in a folder it trusts, a workspace's .mcp.json (or
		// .github/mcp.json) server of the same name is the one it starts
		// ("copilot mcp get tasks": Source: Workspace)
		{name: "CopilotWorkspaceServerOverrides", host: "copilot",
			files: map[string]string{"~/.copilot/config.json": `{"trusted_folders": ["{project}"]}`,
				".mcp.json": `{"mcpServers": {"tasks": {"command": "echo", "args": ["hi"]}}}`},
			problem: `the MCP server tasks in {project}/.mcp.json, which does not run tasksessiond mcp, overrides setup's: Copilot CLI starts that one in this folder`,
			fix:     `remove mcpServers.tasks from {project}/.mcp.json`},
		{name: "CopilotWorkspaceServerToolsLeftOut", host: "copilot",
			files: map[string]string{"~/.copilot/config.json": `{"trusted_folders": ["{project}"]}`,
				".github/mcp.json": `{"mcpServers": {"tasks": {"command": "tasksessiond", "args": ["mcp"], "tools": ["TaskList"]}}}`},
			problem: `"tools" of the MCP server tasks in {project}/.github/mcp.json leaves out TaskCreate, TaskGet, TaskUpdate`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newSetupEnv(t)
			project := t.TempDir()
			dir := project
			if strings.Contains(c.name, "Distrusted") {
				dir = filepath.Join(project, "sub")
				require.NoError(t, os.Mkdir(dir, 0o755))
			}
			expand := func(s string) string {
				s = strings.ReplaceAll(strings.ReplaceAll(s, "{project}", project), "{bin}", e.bin)
				return strings.ReplaceAll(s, "~/", e.home+"/")
			}
			args := []string{"--bin", e.bin, c.host}
			if c.project {
				args = append(args, "--project")
			}
			out, code := e.runIn(t, dir, trust, append([]string{"setup"}, args...)...)
			require.Equal(t, 0, code, out)
			out, code = e.runIn(t, dir, trust, append([]string{"doctor"}, args...)...)
			require.Equal(t, 0, code, "doctor after setup:\n%s", out)

			// each file's members are added to the file as setup left it
			was := map[string][]byte{}
			for rel, text := range c.files {
				p := filepath.Join(project, rel)
				if strings.HasPrefix(rel, "~/") {
					p = expand(rel)
				}
				old, err := os.ReadFile(p)
				if err == nil {
					was[p] = old
				} else {
					was[p] = nil
				}
				merged := map[string]any{}
				if old != nil {
					require.NoError(t, json.Unmarshal(old, &merged), "%s", p)
				}
				require.NoError(t, json.Unmarshal([]byte(expand(text)), &merged))
				b, err := json.Marshal(merged)
				require.NoError(t, err)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, b, 0o600))
			}
			out, code = e.runIn(t, dir, c.env, append([]string{"doctor"}, args...)...)
			assert.Equal(t, 1, code, out)
			assert.Contains(t, out, "NOT RIGHT")
			assert.Contains(t, out, expand(c.problem))
			if c.fix != "" {
				assert.Contains(t, out, "fix: ")
				assert.Contains(t, out, expand(c.fix))
			}

			for p, old := range was {
				if old == nil {
					require.NoError(t, os.Remove(p))
				} else {
					require.NoError(t, os.WriteFile(p, old, 0o600))
				}
			}
			out, code = e.runIn(t, dir, trust, append([]string{"doctor"}, args...)...)
			assert.Equal(t, 0, code, "doctor once the setting is gone:\n%s", out)
		})
	}
}

// pluginFiles are the files "claude plugin install tasksessiond
// --marketplace <repo>" writes (Claude Code 2.1.328), relative to HOME.
var pluginFiles = map[string]string{
	".claude/settings.json":                  `{"extraKnownMarketplaces": {"tasksessiond": {"source": {"source": "directory", "path": "/src/tasksessiond"}}}, "enabledPlugins": {"tasksessiond@tasksessiond": true}}`,
	".claude/plugins/installed_plugins.json": `{"version": 2, "plugins": {"tasksessiond@tasksessiond": [{"scope": "user", "installPath": "/x", "version": "0.1.0"}]}}`,
}

// extensionFiles are the files "gemini extensions install <repo>" writes
// (Gemini CLI 0.61.0), relative to HOME.
var extensionFiles = map[string]string{
	".gemini/extensions/tasksessiond/gemini-extension.json": `{"name": "tasksessiond", "mcpServers": {"tasks": {"command": "tasksessiond", "args": ["mcp"]}}}`,
	".gemini/extensions/extension-enablement.json":          `{"tasksessiond": {"overrides": ["/*"]}}`,
}

// qwenExtensionFiles are the files "qwen extensions install <dir>" writes
// (Qwen Code 0.24.4) of the Gemini CLI extension, relative to HOME.
var qwenExtensionFiles = map[string]string{
	".qwen/extensions/tasksessiond/gemini-extension.json": extensionFiles[".gemini/extensions/tasksessiond/gemini-extension.json"],
	".qwen/extensions/tasksessiond/qwen-extension.json":   `{"name": "tasksessiond", "version": "0.1.0", "mcpServers": {"tasks": {"command": "tasksessiond", "args": ["mcp"]}}}`,
	".qwen/extensions/extension-enablement.json":          `{}`,
}

func TestDoctorPluginRoute(t *testing.T) {
	// Ensures the Claude Code plugin and the Gemini CLI extension, as
	// their install commands leave them, are "set up" (by the plugin),
	// that setup refuses to add its own beside them (changing nothing),
	// that doctor reports setup's own server beside them as a duplicate,
	// and that an extension disabled for the folder is no route.
	for _, c := range []struct {
		host   string
		files  map[string]string
		route  string
		server string // setup's server beside the route, relative to HOME
		off    map[string]string
	}{
		{"claude-code", pluginFiles, "the plugin tasksessiond@tasksessiond",
			".claude.json", map[string]string{".claude/settings.json": `{"enabledPlugins": {"tasksessiond@tasksessiond": false}}`}},
		{"gemini", extensionFiles, "the extension tasksessiond",
			".gemini/settings.json", map[string]string{".gemini/extensions/extension-enablement.json": `{"tasksessiond": {"overrides": ["/*", "!/*"]}}`}},
		// the same extension as "qwen extensions install" (Qwen Code
		// 0.24.4) leaves it, and "qwen extensions disable" turns it off
		{"qwen", qwenExtensionFiles, "the extension tasksessiond",
			".qwen/settings.json", map[string]string{".qwen/extensions/extension-enablement.json": `{"tasksessiond": {"overrides": ["!/*"]}}`}},
	} {
		t.Run(c.host, func(t *testing.T) {
			t.Parallel()
			e := newSetupEnv(t)
			e.write(t, c.files)
			dir := t.TempDir()
			out, code := e.runIn(t, dir, trust, "doctor", "--bin", e.bin, c.host)
			assert.Equal(t, 0, code, out)
			assert.Contains(t, out, "set up (by "+c.route+")")

			orig := e.snapshot(t)
			out, code = e.runIn(t, dir, trust, "setup", "--bin", e.bin, c.host)
			assert.Equal(t, 1, code, out)
			assert.Contains(t, out, c.route)
			assert.Contains(t, out, "twice; nothing was changed")
			assert.Equal(t, orig, e.snapshot(t), "setup beside the plugin changed a file")

			e.write(t, map[string]string{c.server: `{"mcpServers": {"todo": {"type": "stdio", "command": "tasksessiond", "args": ["mcp"]}}}`})
			out, code = e.runIn(t, dir, trust, "doctor", "--bin", e.bin, c.host)
			assert.Equal(t, 1, code, out)
			assert.Contains(t, out, "NOT RIGHT (set up by "+c.route+")")
			assert.Contains(t, out, "the MCP server todo in "+filepath.Join(e.home, c.server)+" runs tasksessiond mcp beside")
			assert.Contains(t, out, "fix: tasksessiond setup "+c.host+" --uninstall")
			require.NoError(t, os.Remove(filepath.Join(e.home, c.server)))

			e.write(t, c.off)
			out, _ = e.runIn(t, dir, trust, "doctor", "--bin", e.bin, c.host)
			assert.NotContains(t, out, c.route, "a plugin or extension turned off is no route")
			out, code = e.runIn(t, dir, trust, "setup", "--bin", e.bin, c.host)
			assert.Equal(t, 0, code, "setup with the plugin or extension off:\n%s", out)
		})
	}
}

func TestDoctorHostNotInstalled(t *testing.T) {
	// Ensures a host that is not on this machine is reported as not
	// found, never as wrong: setup and uninstall of each host where it is
	// not installed take back the directory setup made (~/.codex, say),
	// an empty one as an earlier setup left it is no sign of the host, and
	// doctor still exits 0.
	t.Parallel()
	e := newSetupEnv(t)
	dir := t.TempDir()
	titles := map[string]string{"claude-code": "Claude Code", "codex": "Codex CLI", "gemini": "Gemini CLI", "opencode": "OpenCode"}
	for name := range titles {
		out, code := e.runIn(t, dir, trust, "setup", "--bin", e.bin, name)
		require.Equal(t, 0, code, out)
		out, code = e.runIn(t, dir, trust, "setup", "--bin", e.bin, name, "--uninstall")
		require.Equal(t, 0, code, out)
	}
	require.NoDirExists(t, filepath.Join(e.home, ".codex"))
	for _, d := range []string{".codex", ".claude", ".gemini", ".config/opencode/plugin"} {
		require.NoError(t, os.MkdirAll(filepath.Join(e.home, d), 0o755))
	}
	out, code := e.runIn(t, dir, trust, "doctor", "--bin", e.bin)
	assert.Equal(t, 0, code, out)
	for _, title := range titles {
		assert.Contains(t, out, title+": not found on this machine")
	}
	assert.NotContains(t, out, "NOT RIGHT")
}

func TestDoctorJSON(t *testing.T) {
	// Ensures doctor --json prints one object: per host its name, status
	// ("set up", "not right", "not found"), route and problems with their
	// fixes, and the daemon; exit status as for the text.
	t.Parallel()
	e := newSetupEnv(t)
	e.write(t, pluginFiles)
	dir := t.TempDir()
	out, code := e.runIn(t, dir, trust, "setup", "--bin", e.bin, "gemini")
	require.Equal(t, 0, code, out)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".gemini"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gemini", "settings.json"), []byte(`{"mcp": {"excluded": ["tasks"]}}`), 0o600))

	cmd := exec.Command(binary, "doctor", "--json", "--bin", e.bin)
	cmd.Dir = dir
	cmd.Env = bareEnv("HOME="+e.home, "PATH="+filepath.Dir(e.bin)+":/usr/bin:/bin", "TASKSESSIOND_SOCKET="+e.socket, "GEMINI_CLI_TRUST_WORKSPACE=true")
	b, err := cmd.Output()
	var x *exec.ExitError
	require.ErrorAs(t, err, &x, "doctor --json exits 1 when a host is not right: %s", b)
	assert.Equal(t, 1, x.ExitCode())
	var rep struct {
		OK    bool `json:"ok"`
		Hosts []struct {
			Name, Title, Status, Route string
			Problems                   []struct{ Problem, Fix string }
		} `json:"hosts"`
		Daemon struct {
			Socket, Status string
			OK             bool
		} `json:"daemon"`
	}
	require.NoError(t, json.Unmarshal(b, &rep), "%s", b)
	assert.False(t, rep.OK)
	byName := map[string]int{}
	for i, h := range rep.Hosts {
		byName[h.Name] = i
	}
	require.Len(t, rep.Hosts, len(host.Names()), "every host, %s", b)
	cc := rep.Hosts[byName["claude-code"]]
	assert.Equal(t, "set up", cc.Status)
	assert.Equal(t, "the plugin tasksessiond@tasksessiond", cc.Route)
	assert.NotNil(t, cc.Problems)
	g := rep.Hosts[byName["gemini"]]
	assert.Equal(t, "not right", g.Status)
	require.Len(t, g.Problems, 1, "%s", b)
	assert.Contains(t, g.Problems[0].Problem, "mcp.excluded")
	assert.Contains(t, g.Problems[0].Fix, `remove "tasks" from mcp.excluded`)
	assert.Equal(t, "not found", rep.Hosts[byName["codex"]].Status)
	assert.Equal(t, e.socket, rep.Daemon.Socket)
	assert.Equal(t, "not running", rep.Daemon.Status)
	assert.True(t, rep.Daemon.OK)
}

func TestDoctorCodexServerDisabled(t *testing.T) {
	// Ensures doctor reports setup's server turned off in config.toml
	// (enabled = false: "codex mcp list" shows it disabled), with the fix.
	t.Parallel()
	e := newSetupEnv(t)
	dir := t.TempDir()
	out, code := e.runIn(t, dir, trust, "setup", "--bin", e.bin, "codex")
	require.Equal(t, 0, code, out)
	path := filepath.Join(e.home, ".codex", "config.toml")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	off := strings.Replace(string(b), "startup_timeout_sec = 30\n", "startup_timeout_sec = 30\nenabled = false\n", 1)
	require.NotEqual(t, string(b), off)
	require.NoError(t, os.WriteFile(path, []byte(off), 0o600))
	out, code = e.runIn(t, dir, trust, "doctor", "--bin", e.bin, "codex")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "the MCP server tasks is disabled (enabled = false under [mcp_servers.tasks] in "+path+")")
	assert.Contains(t, out, "fix: remove enabled = false from [mcp_servers.tasks] in "+path)
}

func TestDoctorHelp(t *testing.T) {
	// Ensures doctor's help is its own (what doctor checks, its flags as
	// doctor reads them, --json) with examples, not setup's words.
	t.Parallel()
	e := newSetupEnv(t)
	out, code := e.runIn(t, t.TempDir(), nil, "doctor", "--help")
	assert.Equal(t, 0, code, out)
	for _, s := range []string{"Usage: tasksessiond doctor", "plugin or extension", "untrusted", "-json", "Examples:\n  tasksessiond doctor\n", "doctor --json"} {
		assert.Contains(t, out, s)
	}
	for _, s := range []string{"set up the MCP server", "Sets HOST up", "set up the current directory"} {
		assert.NotContains(t, out, s, "setup's words in doctor's help")
	}
}

func TestDoctorPluginWithoutTasksessiondOnPath(t *testing.T) {
	// Ensures doctor reports the Claude Code plugin where no tasksessiond
	// is on PATH (the plugin runs "tasksessiond"), with the fix.
	t.Parallel()
	e := newSetupEnv(t)
	e.write(t, pluginFiles)
	out, code := e.runIn(t, t.TempDir(), []string{"PATH=/usr/bin:/bin"}, "doctor", "--bin", e.bin, "claude-code")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "NOT RIGHT (set up by the plugin tasksessiond@tasksessiond)")
	assert.Contains(t, out, "the plugin runs tasksessiond from PATH, and there is none on PATH")
	assert.Contains(t, out, "fix: npm install -g tasksessiond")
}

func TestDoctorClaudeDisabledForTheRepository(t *testing.T) {
	// Ensures doctor finds the server disabled in /mcp where Claude Code
	// (2.1.328) keeps it: under the git root, for a worktree under the
	// repository's main folder, whatever subfolder it runs in. Run in a
	// subfolder or a worktree, doctor once said "set up" while
	// "claude mcp list" said "Disabled for this project".
	e := newSetupEnv(t)
	repo := t.TempDir()
	wt := t.TempDir()
	for _, d := range []string{"sub/deeper", ".git/worktrees/wt"} {
		require.NoError(t, os.MkdirAll(filepath.Join(repo, d), 0o755))
	}
	// what "git worktree add" leaves
	require.NoError(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(repo, ".git", "worktrees", "wt")+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".git", "worktrees", "wt", "commondir"), []byte("../..\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(wt, "sub"), 0o755))

	out, code := e.runIn(t, repo, nil, "setup", "--bin", e.bin, "claude-code")
	require.Equal(t, 0, code, out)
	state := filepath.Join(e.home, ".claude.json")
	var v map[string]any
	b, err := os.ReadFile(state)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &v))
	v["projects"] = map[string]any{repo: map[string]any{"disabledMcpServers": []string{"tasks"}}}
	b, err = json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(state, b, 0o600))

	for _, dir := range []string{repo, filepath.Join(repo, "sub", "deeper"), wt, filepath.Join(wt, "sub")} {
		out, code := e.runIn(t, dir, nil, "doctor", "--bin", e.bin, "claude-code")
		assert.Equal(t, 1, code, "in %s:\n%s", dir, out)
		assert.Contains(t, out, "the MCP server tasks is disabled for "+repo+" ", "in %s", dir)
		assert.Contains(t, out, "fix: enable tasks in Claude Code's /mcp, in "+repo, "in %s", dir)
	}
	// a folder of no repository is its own project
	other := t.TempDir()
	out, code = e.runIn(t, other, nil, "doctor", "--bin", e.bin, "claude-code")
	assert.Equal(t, 0, code, out)
}

func TestDoctorCodexTrustedProjectLayer(t *testing.T) {
	// Ensures doctor reads, as Codex (0.169.0) does, the .codex/config.toml
	// of a trusted project from its root down to the current folder over
	// the user's: the server disabled there is reported (doctor once said
	// "set up" while "codex mcp list" said disabled), one in an untrusted
	// project is not (Codex does not read it), and one the project turns
	// back on is not either.
	e := newSetupEnv(t)
	project := t.TempDir()
	sub := filepath.Join(project, "sub")
	for _, d := range []string{".git", ".codex", "sub"} {
		require.NoError(t, os.MkdirAll(filepath.Join(project, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(project, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	out, code := e.runIn(t, sub, nil, "setup", "--bin", e.bin, "codex")
	require.Equal(t, 0, code, out)
	userTOML := filepath.Join(e.home, ".codex", "config.toml")
	setupTOML, err := os.ReadFile(userTOML)
	require.NoError(t, err)
	projTOML := filepath.Join(project, ".codex", "config.toml")
	require.NoError(t, os.WriteFile(projTOML, []byte("[mcp_servers.tasks]\nenabled = false\n"), 0o644))

	out, code = e.runIn(t, sub, nil, "doctor", "--bin", e.bin, "codex")
	assert.Equal(t, 0, code, "untrusted, Codex reads none of it:\n%s", out)

	trusted := string(setupTOML) + "\n[projects.\"" + project + "\"]\ntrust_level = \"trusted\"\n"
	require.NoError(t, os.WriteFile(userTOML, []byte(trusted), 0o600))
	out, code = e.runIn(t, sub, nil, "doctor", "--bin", e.bin, "codex")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "the MCP server tasks is disabled (enabled = false under [mcp_servers.tasks] in "+projTOML+")")
	assert.Contains(t, out, "fix: remove enabled = false from [mcp_servers.tasks] in "+projTOML)

	// the project's word is the last
	require.NoError(t, os.WriteFile(projTOML, []byte("[mcp_servers.tasks]\nenabled = true\n"), 0o644))
	out, code = e.runIn(t, sub, nil, "doctor", "--bin", e.bin, "codex")
	assert.Equal(t, 0, code, out)

	// one it cannot parse: codex 0.169.0 stops ("failed to load bootstrap
	// configuration"), where doctor once said "set up"
	require.NoError(t, os.WriteFile(projTOML, []byte("model = \n"), 0o644))
	out, code = e.runIn(t, sub, nil, "doctor", "--bin", e.bin, "codex")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "Codex cannot read the trusted project's "+projTOML+" (")
	assert.Contains(t, out, "fix: repair "+projTOML)
}

func TestDoctorGeminiSettingsItCannotRead(t *testing.T) {
	// Ensures doctor reads Gemini CLI's settings files as Gemini CLI
	// 0.61.0 does (comments, but no byte order mark, no trailing comma):
	// one it cannot parse stops it at start ("Please fix the
	// configuration file(s)"), the workspace's whether trusted or not,
	// and doctor once said "set up" for each of these.
	for _, c := range []struct {
		name, rel, text string
	}{
		{"UserBOM", "~/.gemini/settings.json", "\ufeff{}"},
		{"WorkspaceTrailingComma", ".gemini/settings.json", "{\"model\": {\"name\": \"x\"},}\n"},
		{"WorkspaceEmpty", ".gemini/settings.json", ""},
		{"WorkspaceDirectory", ".gemini/settings.json/", ""},
		{"TrustedFoldersTrailingComma", "~/.gemini/trustedFolders.json", "{\"{project}\": \"TRUST_FOLDER\",}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newSetupEnv(t)
			project := t.TempDir()
			out, code := e.runIn(t, project, trust, "setup", "--bin", e.bin, "gemini")
			require.Equal(t, 0, code, out)
			p := filepath.Join(project, c.rel)
			if strings.HasPrefix(c.rel, "~/") {
				p = filepath.Join(e.home, c.rel[2:])
			}
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			if strings.HasSuffix(c.rel, "/") {
				require.NoError(t, os.Mkdir(p, 0o755))
			} else if c.name == "UserBOM" {
				old, err := os.ReadFile(p)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(p, append([]byte("\ufeff"), old...), 0o600))
			} else {
				require.NoError(t, os.WriteFile(p, []byte(strings.ReplaceAll(c.text, "{project}", project)), 0o600))
			}
			p = filepath.Clean(p)
			envs := [][]string{trust, nil}
			if strings.Contains(c.name, "TrustedFolders") {
				envs = [][]string{nil} // read only where the environment does not decide
			}
			for _, env := range envs {
				out, code = e.runIn(t, project, env, "doctor", "--bin", e.bin, "gemini")
				assert.Equal(t, 1, code, out)
				assert.Contains(t, out, "Gemini CLI cannot read "+p+": ")
				assert.Contains(t, out, "fix: repair "+p)
			}
		})
	}
	t.Run("WorkspaceComments", func(t *testing.T) {
		e := newSetupEnv(t)
		project := t.TempDir()
		out, code := e.runIn(t, project, trust, "setup", "--bin", e.bin, "gemini")
		require.Equal(t, 0, code, out)
		require.NoError(t, os.MkdirAll(filepath.Join(project, ".gemini"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(project, ".gemini", "settings.json"), []byte("// mine\n{\"model\": {\"name\": \"x\"}} /* end */\n"), 0o600))
		out, code = e.runIn(t, project, trust, "doctor", "--bin", e.bin, "gemini")
		assert.Equal(t, 0, code, out)
	})
}

func TestDoctorNamesAProblemOnce(t *testing.T) {
	// Ensures a file setup cannot read, which setup's plan and its check
	// both name, is one problem in doctor's report (text and --json), and
	// a directory where a settings file should be is named with its path
	// once ("cannot read read PATH" once).
	e := newSetupEnv(t)
	dir := t.TempDir()
	out, code := e.runIn(t, dir, nil, "setup", "--bin", e.bin, "claude-code")
	require.Equal(t, 0, code, out)
	state := filepath.Join(e.home, ".claude.json")
	require.NoError(t, os.WriteFile(state, []byte("{\"mcpServers\": {},}\n"), 0o600))
	out, code = e.runIn(t, dir, nil, "doctor", "--bin", e.bin, "claude-code")
	assert.Equal(t, 1, code, out)
	assert.Equal(t, 1, strings.Count(out, "  - "), out)
	out, code = e.runIn(t, dir, nil, "doctor", "--json", "--bin", e.bin, "claude-code")
	assert.Equal(t, 1, code, out)
	var rep struct {
		Hosts []struct {
			Problems []struct{ Problem, Fix string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Len(t, rep.Hosts[0].Problems, 1, out)

	settings := filepath.Join(e.home, ".claude", "settings.json")
	require.NoError(t, os.Remove(state))
	require.NoError(t, os.Remove(settings))
	require.NoError(t, os.Mkdir(settings, 0o755))
	out, code = e.runIn(t, dir, nil, "doctor", "--bin", e.bin, "claude-code")
	assert.Equal(t, 1, code, out)
	assert.NotContains(t, out, "read read", out)
	assert.Contains(t, out, "Claude Code cannot read "+settings+": is a directory", out)
}

func TestDoctorOpenCodeProjectConfigItCannotRead(t *testing.T) {
	// Ensures a project's opencode.json that OpenCode (1.18.33) cannot
	// read, which stops it at start ("is not valid JSON(C)"), is
	// reported with its fix; doctor once said "set up".
	e := newSetupEnv(t)
	project := t.TempDir()
	out, code := e.runIn(t, project, nil, "setup", "--bin", e.bin, "opencode")
	require.Equal(t, 0, code, out)
	cfg := filepath.Join(project, "opencode.json")
	require.NoError(t, os.WriteFile(cfg, []byte("{\"tools\": {\n"), 0o644))
	out, code = e.runIn(t, project, nil, "doctor", "--bin", e.bin, "opencode")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "OpenCode cannot read "+cfg+" (")
	assert.Contains(t, out, "fix: repair "+cfg)
	require.NoError(t, os.WriteFile(cfg, []byte("// mine\n{\"tools\": {\"bash\": true,},}\n"), 0o644))
	out, code = e.runIn(t, project, nil, "doctor", "--bin", e.bin, "opencode")
	assert.Equal(t, 0, code, out)
}

func TestDoctorClaudeProjectFromASubfolder(t *testing.T) {
	// Ensures doctor run in a subfolder of a repository reads the project
	// files Claude Code (2.1.328) reads there ("claude mcp list" run in
	// the subfolder shows it): .claude/settings.local.json at the git
	// root, .claude/settings.json of the folder itself only, and the
	// .mcp.json of every folder from there up. Doctor once read only the
	// folder's own, and said "set up" beside a deny rule at the root.
	e := newSetupEnv(t)
	repo := t.TempDir()
	sub := filepath.Join(repo, "sub", "deeper")
	for _, d := range []string{".git", ".claude", "sub/deeper"} {
		require.NoError(t, os.MkdirAll(filepath.Join(repo, d), 0o755))
	}
	out, code := e.runIn(t, sub, nil, "setup", "--bin", e.bin, "claude-code")
	require.Equal(t, 0, code, out)
	write := func(rel, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(repo, rel), []byte(text), 0o600))
	}
	local := filepath.Join(repo, ".claude", "settings.local.json")

	// the root's settings.json is not read in the subfolder
	write(".claude/settings.json", `{"permissions": {"deny": ["mcp__tasks"]}}`)
	out, code = e.runIn(t, sub, nil, "doctor", "--bin", e.bin, "claude-code")
	assert.Equal(t, 0, code, out)

	// the root's settings.local.json is
	write(".claude/settings.local.json", `{"permissions": {"deny": ["mcp__tasks"]}}`)
	out, code = e.runIn(t, sub, nil, "doctor", "--bin", e.bin, "claude-code")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, `the deny rule "mcp__tasks" in `+local)

	// a server "tasks" in the root's .mcp.json, rejected by the root's
	// settings.local.json
	write(".claude/settings.local.json", `{"disabledMcpjsonServers": ["tasks"]}`)
	write(".mcp.json", `{"mcpServers": {"tasks": {"command": "tasksessiond", "args": ["mcp"]}}}`)
	out, code = e.runIn(t, sub, nil, "doctor", "--bin", e.bin, "claude-code")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, `"tasks" is in disabledMcpjsonServers in `+local)
}

func TestDoctorQwenJoinsAllowedLists(t *testing.T) {
	// Ensures doctor takes Qwen Code's (0.24.4) mcp.allowed as it does:
	// the lists of every settings file joined ("qwen mcp reconnect --all"
	// connects the server that one file leaves out and another names),
	// and reports the server left out only when none names it.
	t.Parallel()
	e := newSetupEnv(t)
	project := t.TempDir()
	out, code := e.runIn(t, project, nil, "setup", "--bin", e.bin, "qwen")
	require.Equal(t, 0, code, out)
	user := filepath.Join(e.home, ".qwen", "settings.json")
	b, err := os.ReadFile(user)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(b, &v))
	v["mcp"] = map[string]any{"allowed": []string{"other"}}
	b, err = json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(user, b, 0o600))
	out, code = e.runIn(t, project, nil, "doctor", "--bin", e.bin, "qwen")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "mcp.allowed in "+user+" leaves out the server tasks")

	require.NoError(t, os.MkdirAll(filepath.Join(project, ".qwen"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(project, ".qwen", "settings.json"), []byte(`{"mcp": {"allowed": ["t*"]}}`), 0o600))
	out, code = e.runIn(t, project, nil, "doctor", "--bin", e.bin, "qwen")
	assert.Equal(t, 0, code, out)
}

func TestDoctorCopilotProjectMCPConfigIsStrictJSON(t *testing.T) {
	// Ensures doctor reads a project's .github/mcp.json as Copilot CLI
	// (1.0.102) does, strict JSON: with a comment it skips the file
	// ("malformed", "copilot mcp list": no server), where doctor once said
	// "set up"; and that a workspace .mcp.json it skips so does not
	// override setup's server.
	t.Parallel()
	e := newSetupEnv(t)
	project := t.TempDir()
	out, code := e.runIn(t, project, nil, "setup", "--bin", e.bin, "--project", "copilot")
	require.Equal(t, 0, code, out)
	path := filepath.Join(project, ".github", "mcp.json")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append([]byte("// ours\n"), b...), 0o600))
	out, code = e.runIn(t, project, nil, "doctor", "--bin", e.bin, "--project", "copilot")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, path+": not strict JSON")
	require.NoError(t, os.WriteFile(path, b, 0o600))

	require.NoError(t, os.MkdirAll(filepath.Join(e.home, ".copilot"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.home, ".copilot", "config.json"), []byte(`{"trusted_folders": ["`+project+`"]}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(project, ".mcp.json"), []byte("// c\n"+`{"mcpServers": {"tasks": {"command": "echo"}}}`), 0o600))
	out, code = e.runIn(t, project, nil, "doctor", "--bin", e.bin, "--project", "copilot")
	assert.Equal(t, 0, code, out)
}

func TestDoctorCopilotUserMCPConfigTakesTrailingCommas(t *testing.T) {
	// Ensures doctor reads the user's mcp-config.json as Copilot CLI
	// (1.0.102) does, comments and trailing commas allowed ("copilot mcp
	// list": tasks (local)), where doctor once called it a file the host
	// does not read.
	t.Parallel()
	e := newSetupEnv(t)
	project := t.TempDir()
	out, code := e.runIn(t, project, nil, "setup", "--bin", e.bin, "copilot")
	require.Equal(t, 0, code, out)
	path := filepath.Join(e.home, ".copilot", "mcp-config.json")
	require.NoError(t, os.WriteFile(path, []byte(`// mine
{"mcpServers": {"tasks": {"type": "local", "command": "`+e.bin+`", "args": ["mcp"], "tools": ["*"],},},}`), 0o600))
	out, code = e.runIn(t, project, nil, "doctor", "--bin", e.bin, "copilot")
	assert.Equal(t, 0, code, out)
	out, code = e.runIn(t, project, nil, "setup", "--bin", e.bin, "copilot")
	assert.Equal(t, 0, code, out)
}

func TestDoctorCopilotProjectInAFolderItDoesNotTrust(t *testing.T) {
	// Ensures doctor names a project Copilot CLI (1.0.102) does not trust:
	// it reads a workspace's MCP config only where COPILOT_ALLOW_ALL is
	// "true" or the folder is in trusted_folders ("copilot mcp get
	// tasks" there: no server), where doctor once said "set up".
	t.Parallel()
	e := newSetupEnv(t)
	project := t.TempDir()
	out, code := e.runIn(t, project, nil, "setup", "--bin", e.bin, "--project", "copilot")
	require.Equal(t, 0, code, out)
	out, code = e.runIn(t, project, nil, "doctor", "--bin", e.bin, "--project", "copilot")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "only in a folder it trusts")
	out, code = e.runIn(t, project, []string{"COPILOT_ALLOW_ALL=true"}, "doctor", "--bin", e.bin, "--project", "copilot")
	assert.Equal(t, 0, code, out)
	require.NoError(t, os.MkdirAll(filepath.Join(e.home, ".copilot"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.home, ".copilot", "config.json"), []byte(`{"trusted_folders": ["`+filepath.Dir(project)+`"]}`), 0o600))
	out, code = e.runIn(t, project, nil, "doctor", "--bin", e.bin, "--project", "copilot")
	assert.Equal(t, 0, code, out)
}
