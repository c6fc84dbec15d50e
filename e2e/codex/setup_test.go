package codex_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/codex"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

func TestSetup(t *testing.T) {
	// Ensures "tasksessiond setup codex" on a user's config.toml (comments,
	// another MCP server) leaves every byte of it in place and Codex
	// reading it (codex mcp list shows both servers; the model named there
	// is the one asked), gives the model the four tools, runs the hook
	// (trusted); a second run changes no byte, --uninstall gives back the
	// user's file byte for byte (and removes the hooks.json it made), and
	// a config.toml Codex cannot read is refused and left as it was.
	t.Parallel()
	script := modelapi.NewScript(
		loadTools,
		modelapi.Call(taskCreate, map[string]any{"subject": "Write the parser"}),
		modelapi.Call(taskList, nil),
		modelapi.Text("One task planned."),
	)
	h := codex.New(t, codex.Options{Respond: script.Respond, NoSetup: true})
	cfg, hooks := filepath.Join(h.CodexHome, "config.toml"), filepath.Join(h.CodexHome, "hooks.json")
	user := "# my Codex settings\n" + strings.Replace(h.UserConfig("", ""), "\n", " # the model I use\n", 1) +
		"\n# another server of mine, not started here\n[mcp_servers.other]\ncommand = \"other-mcp-server\" # not installed\nenabled = false\n"
	h.WriteFile(cfg, user, 0o600)

	out := h.Setup(t, "codex")
	assert.Contains(t, out, "note: Codex CLI's own update_plan cannot be turned off")
	set := read(t, cfg)
	require.True(t, strings.HasPrefix(set, user), "the user's bytes are not kept in front:\n%s", set)
	setHooks := read(t, hooks)
	h.Setup(t, "codex")
	assert.Equal(t, set, read(t, cfg), "a second setup changed config.toml")
	assert.Equal(t, setHooks, read(t, hooks), "a second setup changed hooks.json")

	list := h.Command(t, 30*time.Second, "mcp", "list", "--json")
	require.NoError(t, list.Err, list.Stderr)
	var servers []struct {
		Name string `json:"name"`
	}
	require.NoError(t, json.Unmarshal([]byte(list.Stdout), &servers), list.Stdout)
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	assert.ElementsMatch(t, []string{"other", "tasks"}, names)

	res := h.Exec(t, "Plan the parser work.")
	assert.Equal(t, "One task planned.", res.Message)
	require.True(t, script.Done(), h.API.Dump())
	main := h.API.Main()
	assert.Equal(t, codex.Model, main[0].Model, "the model of the user's config.toml")
	for _, name := range []string{taskCreate, taskList, taskGet, taskUpdate} {
		assert.True(t, main[1].HasTool(name), "%s not offered after tool_search", name)
	}
	require.NotEmpty(t, h.Hooks(), "the SessionStart hook did not run (is setup's trust hash right?)")
	assert.Equal(t, res.ThreadID, h.Hooks()[0].SessionID)
	assert.Equal(t, []string{"1 pending Write the parser"}, h.Daemon.Subjects(t, res.ThreadID))

	h.Setup(t, "codex", "--uninstall")
	assert.Equal(t, user, read(t, cfg), "--uninstall did not give back the user's config.toml")
	assert.NoFileExists(t, hooks, "--uninstall left the hooks.json setup made")

	bad := user + "[mcp_servers.tasks]\ncommand = \"mine\"\nmodel = \n"
	h.WriteFile(cfg, bad, 0o600)
	msg, err := h.RunTSD([]string{"setup", "codex", "--bin", h.Rec.Bin})
	require.Error(t, err, msg)
	assert.Contains(t, msg, cfg)
	assert.Contains(t, msg, "nothing was changed")
	assert.Equal(t, bad, read(t, cfg))
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
