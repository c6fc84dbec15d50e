package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSetupNeverLosesWhatTheUserWrote(t *testing.T) {
	// Ensures the damage issue 51 found is refused or avoided, each case
	// with the file left as the user wrote it or set up as the host reads
	// it (the pinned CLIs read the results back in e2e/codex).
	t.Parallel()
	t.Run("CodexInlineTables", func(t *testing.T) {
		// Codex cannot extend an inline table with a [table] header:
		// setup refuses, saying so, and changes nothing.
		t.Parallel()
		for _, cfg := range []string{
			"mcp_servers = { gh = { command = \"npx\" } }\n",
			"hooks = { state = {} }\n",
			"model = \"o3\"\n[hooks]\nstate = {}\n",
		} {
			e := newSetupEnv(t)
			e.write(t, map[string]string{".codex/config.toml": cfg})
			orig := e.snapshot(t)
			out, code := setupHost(t, e, "codex")
			assert.Equal(t, 1, code, "%q: %s", cfg, out)
			assert.Contains(t, out, filepath.Join(e.home, ".codex", "config.toml"))
			assert.Contains(t, out, "inline table", cfg)
			assert.Equal(t, orig, e.snapshot(t), "%q", cfg)
		}
	})
	t.Run("UsersOwnTasksServer", func(t *testing.T) {
		// A server of the user's called tasks, running tasksessiond mcp
		// their own way, is refused by name, and uninstall leaves it.
		t.Parallel()
		for name, files := range map[string]map[string]string{
			"claude-code": {".claude.json": `{"mcpServers": {"tasks": {"type": "stdio", "command": "tasksessiond", "args": ["mcp", "--session", "team-list"], "env": {"TEAM": "1"}}}}` + "\n"},
			"gemini":      {".gemini/settings.json": `{"mcpServers": {"tasks": {"command": "tasksessiond", "args": ["mcp", "--session", "team-list"], "timeout": 9000}}}` + "\n"},
			"codex": {".codex/config.toml": "[mcp_servers.tasks]\ncommand = \"tasksessiond\"\nargs = [\"mcp\", \"--session\", \"team-list\"]\n" +
				"enabled_tools = [\"TaskList\"]\ntool_timeout_sec = 60\n\n[mcp_servers.tasks.env]\nTEAM = \"1\"\n"},
		} {
			e := newSetupEnv(t)
			e.write(t, files)
			orig := e.snapshot(t)
			out, code := setupHost(t, e, name)
			assert.Equal(t, 1, code, "%s: %s", name, out)
			assert.Contains(t, out, "tasks is a server of yours", name)
			assert.Equal(t, orig, e.snapshot(t), name)
			out, code = setupHost(t, e, name, "--uninstall")
			assert.Equal(t, 0, code, "%s: %s", name, out)
			assert.Equal(t, orig, e.snapshot(t), "%s: uninstall took the user's server", name)
		}
	})
	t.Run("CodexHookTrust", func(t *testing.T) {
		// The user's own SessionStart hook, added after setup and trusted,
		// keeps its trust through a setup with other flags and through
		// uninstall: the trust follows the hook where it moves.
		t.Parallel()
		e := newSetupEnv(t)
		hooks, cfg := filepath.Join(e.home, ".codex", "hooks.json"), filepath.Join(e.home, ".codex", "config.toml")
		out, code := setupHost(t, e, "codex")
		require.Equal(t, 0, code, out)
		var doc map[string]map[string][]any
		require.NoError(t, json.Unmarshal([]byte(readFile(t, hooks)), &doc))
		doc["hooks"]["SessionStart"] = append(doc["hooks"]["SessionStart"], map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "my-hook"}}})
		b, _ := json.MarshalIndent(doc, "", "  ")
		require.NoError(t, os.WriteFile(hooks, b, 0o600))
		f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString("\n[hooks.state.\"" + hooks + ":session_start:1:0\"]\nenabled = true\ntrusted_hash = \"sha256:mine\"\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
		for _, extra := range [][]string{{"--session", "team"}, {"--uninstall"}} {
			out, code := setupHost(t, e, "codex", extra...)
			require.Equal(t, 0, code, out)
			i := userHookIndex(t, hooks, "my-hook")
			m := regexp.MustCompile(`\[hooks\.state\."([^"]*)"\]\nenabled = true\ntrusted_hash = "sha256:mine"`).FindStringSubmatch(readFile(t, cfg))
			require.NotNil(t, m, "%v: the user's hook lost its trust:\n%s", extra, readFile(t, cfg))
			assert.Equal(t, hooks+":session_start:"+i+":0", m[1], "%v: the trust is not the user's hook's", extra)
		}
	})
	t.Run("DanglingLink", func(t *testing.T) {
		// A config file that is a link to nothing (dotfiles not checked
		// out) is refused, the link kept.
		t.Parallel()
		e := newSetupEnv(t)
		link := filepath.Join(e.home, ".gemini", "settings.json")
		require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
		require.NoError(t, os.Symlink(filepath.Join(e.home, "dotfiles", "gemini.json"), link))
		out, code := setupHost(t, e, "gemini")
		assert.Equal(t, 1, code, out)
		assert.Contains(t, out, link)
		st, err := os.Lstat(link)
		require.NoError(t, err)
		assert.Equal(t, os.ModeSymlink, st.Mode()&os.ModeSymlink, "the link was replaced")
		assert.NoDirExists(t, filepath.Join(e.home, "dotfiles"))
	})
	t.Run("RelativePaths", func(t *testing.T) {
		// A relative --bin and a relative CODEX_HOME are written absolute:
		// the host runs them from anywhere, and Codex's trust key is the
		// absolute path of hooks.json.
		t.Parallel()
		e := newSetupEnv(t)
		cmd := exec.Command(binary, "setup", "gemini", "--bin", "./bin/tasksessiond")
		cmd.Dir, cmd.Env = e.home, bareEnv("HOME="+e.home, "PATH=/usr/bin:/bin")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, readFile(t, filepath.Join(e.home, ".gemini", "settings.json")), `"command": "`+e.bin+`"`)
		cmd = exec.Command(binary, "setup", "codex", "--bin", e.bin)
		cmd.Dir, cmd.Env = e.home, bareEnv("HOME="+e.home, "PATH=/usr/bin:/bin", "CODEX_HOME=cx")
		out, err = cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, readFile(t, filepath.Join(e.home, "cx", "config.toml")), `[hooks.state."`+filepath.Join(e.home, "cx", "hooks.json")+`:session_start:0:0"]`)
	})
	t.Run("ReadOnlyFile", func(t *testing.T) {
		// A file the user made read-only is refused, and so is the whole
		// setup: a file before it is not changed either.
		t.Parallel()
		e := newSetupEnv(t)
		e.write(t, userFiles["claude-code"])
		require.NoError(t, os.Chmod(filepath.Join(e.home, ".claude", "settings.json"), 0o444))
		orig := e.snapshot(t)
		out, code := setupHost(t, e, "claude-code")
		assert.Equal(t, 1, code, out)
		assert.Contains(t, out, filepath.Join(e.home, ".claude", "settings.json"))
		assert.Contains(t, out, "read-only")
		assert.Equal(t, orig, e.snapshot(t), "a file was changed")
		assert.NoFileExists(t, e.record())
	})
	t.Run("BackupHoldsTheOriginal", func(t *testing.T) {
		// The backup holds the user's original, not a set-up version: a
		// setup with other flags does not write over it.
		t.Parallel()
		e := newSetupEnv(t)
		e.write(t, userFiles["gemini"])
		orig := userFiles["gemini"][".gemini/settings.json"]
		backup := filepath.Join(e.home, ".gemini", "settings.json.tasksessiond-backup")
		for _, extra := range [][]string{nil, {"--session", "team"}} {
			out, code := setupHost(t, e, "gemini", extra...)
			require.Equal(t, 0, code, out)
			assert.Equal(t, orig, readFile(t, backup), "%v", extra)
		}
	})
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// userHookIndex is the index, among SessionStart's groups in hooks, of the
// group running command.
func userHookIndex(t *testing.T, hooks, command string) string {
	t.Helper()
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	require.NoError(t, json.Unmarshal([]byte(readFile(t, hooks)), &doc))
	for i, g := range doc.Hooks["SessionStart"] {
		if len(g.Hooks) > 0 && g.Hooks[0].Command == command {
			return strconv.Itoa(i)
		}
	}
	t.Fatalf("no group runs %s", command)
	return ""
}
