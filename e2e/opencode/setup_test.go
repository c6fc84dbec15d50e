package opencode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/opencode"
)

func TestSetup(t *testing.T) {
	// Ensures "tasksessiond setup opencode" on a user's opencode.jsonc (a
	// BOM, comments, a line comment after the last member of "tools",
	// trailing commas: the file install.sh once broke) keeps every byte of
	// it, OpenCode reads it (its "bash" setting and model hold), offers the
	// plugin's four tools and not its own todowrite; a second run changes
	// no byte, --uninstall gives back the user's file byte for byte (and
	// removes the plugin), and a file OpenCode cannot read is refused and
	// left as it was.
	t.Parallel()
	script := modelapi.NewScript(
		modelapi.Call("TaskCreate", map[string]any{"subject": "Write the parser"}),
		modelapi.Call("TaskList", nil),
		modelapi.Text("One task planned."),
	)
	h := opencode.New(t, opencode.Options{Respond: script.Respond, NoSetup: true})
	require.NoError(t, os.Remove(filepath.Join(h.Config, "opencode.json")))
	cfg, plugin := filepath.Join(h.Config, "opencode.jsonc"), filepath.Join(h.Config, "plugin", "tasksessiond.ts")
	b, err := json.MarshalIndent(h.UserConfig(), "", "  ")
	require.NoError(t, err)
	user := "\ufeff// my OpenCode settings\n" + strings.TrimSuffix(string(b), "\n}") +
		",\n  /* the shell stays */\n  \"tools\": {\n    \"bash\": true // keep the shell\n  },\n}\n"
	h.WriteFile(cfg, user, 0o600)

	out := h.Setup(t, "opencode")
	assert.Contains(t, out, "note: OpenCode's own todowrite is off")
	set := read(t, cfg)
	assert.Contains(t, set, "\"bash\": true, // keep the shell\n    \"todowrite\": false,\n    \"todoread\": false\n  },\n}\n")
	require.FileExists(t, plugin)
	h.Setup(t, "opencode")
	assert.Equal(t, set, read(t, cfg), "a second setup changed opencode.jsonc")
	h.Setup(t, "opencode", "--uninstall")
	assert.Equal(t, user, read(t, cfg), "--uninstall did not give back the user's opencode.jsonc")
	assert.NoFileExists(t, plugin)
	h.Setup(t, "opencode")

	run := h.Run(t, "Plan the parser work.")
	assert.Equal(t, "One task planned.", run.Text)
	require.True(t, script.Done(), h.API.Dump())
	main := h.API.Main()
	require.NotEmpty(t, main)
	for _, name := range []string{"TaskCreate", "TaskList", "TaskGet", "TaskUpdate", "bash"} {
		assert.True(t, main[0].HasTool(name), "%s not offered: %v", name, main[0].ToolNames())
	}
	assert.False(t, main[0].HasTool("todowrite"), "OpenCode's own todowrite is offered beside ours")
	assert.Equal(t, opencode.MainModel, main[0].Model, "the model of the user's opencode.jsonc")
	assert.Equal(t, []string{"1 pending Write the parser"}, h.Daemon.Subjects(t, run.SessionID))

	bad := "{\n  \"tools\": {\n    \"bash\": true,, // keep the shell\n  }\n}\n"
	h.WriteFile(cfg, bad, 0o600)
	msg, err := h.RunTSD([]string{"setup", "opencode"})
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
