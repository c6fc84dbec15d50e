package opencode_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
)

// TestInstallScript ensures contrib/opencode/install.sh copies the plugin
// into the config dir and merges its fragment into the user's
// opencode.json, keeping every other setting, creating the file when it is
// missing, and changing nothing when run again. It needs node, not
// OpenCode.
func TestInstallScript(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH: install.sh needs it")
	}
	root, err := harness.RepoRoot()
	require.NoError(t, err)
	script := filepath.Join(root, "contrib", "opencode", "install.sh")
	run := func(xdg string) (string, error) {
		t.Helper()
		cmd := exec.Command("sh", script)
		cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + xdg}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	install := func(xdg string) {
		t.Helper()
		out, err := run(xdg)
		require.NoError(t, err, "%s", out)
	}
	read := func(path string) map[string]any {
		t.Helper()
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		var v map[string]any
		require.NoError(t, json.Unmarshal(b, &v), "%s", b)
		return v
	}
	plugin, err := os.ReadFile(filepath.Join(root, "contrib", "opencode", "tasksessiond.ts"))
	require.NoError(t, err)
	off := map[string]any{"todowrite": false, "todoread": false}

	// No config yet: it is created.
	fresh := t.TempDir()
	install(fresh)
	got, err := os.ReadFile(filepath.Join(fresh, "opencode", "plugin", "tasksessiond.ts"))
	require.NoError(t, err)
	assert.Equal(t, string(plugin), string(got))
	cfg := read(filepath.Join(fresh, "opencode", "opencode.json"))
	assert.Equal(t, off, cfg["tools"])
	assert.Equal(t, "https://opencode.ai/config.json", cfg["$schema"])

	// A config of the user's: merged, the rest kept; a second run changes nothing.
	user := t.TempDir()
	path := filepath.Join(user, "opencode", "opencode.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(`{"model": "anthropic/claude-sonnet-4-6", "tools": {"bash": true, "todowrite": true}, "mcp": {"x": {"type": "local", "command": ["x"]}}}`), 0o600))
	install(user)
	cfg = read(path)
	assert.Equal(t, "anthropic/claude-sonnet-4-6", cfg["model"])
	assert.Equal(t, map[string]any{"bash": true, "todowrite": false, "todoread": false}, cfg["tools"])
	assert.Contains(t, cfg, "mcp")
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	install(user)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "a second install changed opencode.json")

	// A config with comments and trailing commas (JSONC, which OpenCode
	// reads): edited in place, every comment and setting kept; a second
	// run changes nothing.
	commented := t.TempDir()
	path = filepath.Join(commented, "opencode", "opencode.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	const jsonc = `// my OpenCode settings
{
  /* the model I use */
  "model": "anthropic/claude-sonnet-4-6", // keep it
  "tools": {
    "bash": true, // yes
    "todowrite": true,
  },
  "mcp": {},
}
`
	require.NoError(t, os.WriteFile(path, []byte(jsonc), 0o600))
	install(commented)
	after, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, `// my OpenCode settings
{
  /* the model I use */
  "model": "anthropic/claude-sonnet-4-6", // keep it
  "tools": {
    "bash": true, // yes
    "todowrite": false,
    "todoread": false
  },
  "mcp": {},
}
`, string(after))
	install(commented)
	again, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(after), string(again), "a second install changed opencode.json")
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the file's mode is kept")
	_, err = os.Stat(filepath.Join(commented, "opencode", "plugin", "tasksessiond.ts"))
	assert.NoError(t, err, "the plugin is installed")

	// opencode.jsonc (which OpenCode reads last) is the one edited.
	jc := t.TempDir()
	path = filepath.Join(jc, "opencode", "opencode.jsonc")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte("{\n  // empty\n}\n"), 0o600))
	install(jc)
	after, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "{\n  // empty\n  \"tools\": {\n    \"todowrite\": false,\n    \"todoread\": false\n  }\n}\n", string(after))
	assert.NoFileExists(t, filepath.Join(jc, "opencode", "opencode.json"))

	// A config it cannot read: it stops before changing anything (the
	// plugin not copied either), saying why.
	broken := t.TempDir()
	path = filepath.Join(broken, "opencode", "opencode.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(`{"model": "x" /* unclosed`), 0o600))
	out, err := run(broken)
	require.Error(t, err)
	assert.Contains(t, out, "nothing was changed")
	assert.NoFileExists(t, filepath.Join(broken, "opencode", "plugin", "tasksessiond.ts"))
	entries, err := os.ReadDir(filepath.Join(broken, "opencode"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"opencode.json"}, names, "nothing left behind")
	after, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, `{"model": "x" /* unclosed`, string(after))
}
