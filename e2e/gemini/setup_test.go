package gemini_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/gemini"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// userSettings is a settings.json as a user may keep it: Gemini CLI strips
// comments, then reads JSON (no trailing commas); CRLF line ends; a model
// of the user's choosing, which the API is asked for.
const userSettings = "// my Gemini CLI settings\r\n{\r\n  /* API key, no telemetry */\r\n" +
	"  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}, \"folderTrust\": {\"enabled\": false}},\r\n" +
	"  \"general\": {\"disableAutoUpdate\": true, \"disableUpdateNag\": true, \"enableAutoUpdate\": false, \"enableAutoUpdateNotification\": false},\r\n" +
	"  \"privacy\": {\"usageStatisticsEnabled\": false},\r\n  \"telemetry\": {\"enabled\": false},\r\n" +
	"  \"model\": {\"name\": \"gemini-2.5-flash\"} // the fast one\r\n}\r\n"

func TestSetup(t *testing.T) {
	// Ensures "tasksessiond setup gemini" on a user's settings.json
	// (comments, CRLF) keeps the user's settings (the model they chose is
	// the one asked), gives the model the four tools and not Gemini CLI's
	// own write_todos, runs the hooks; a second run changes no byte,
	// --uninstall gives back the user's file byte for byte, and a file
	// Gemini CLI cannot read (a trailing comma) is refused untouched.
	t.Parallel()
	h := gemini.New(t, gemini.Options{SettingsFile: userSettings, NoSetup: true, Respond: modelapi.NewScript(
		modelapi.Text("Nothing to plan."), // the run before setup
		modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Write the parser"})),
		modelapi.Calls(call(gemini.TaskList, nil)),
		modelapi.Text("Planned."),
	).Respond})
	settings := filepath.Join(h.Home, ".gemini", "settings.json")

	out := h.Setup(t, "gemini")
	assert.Contains(t, out, "note: Gemini CLI's own write_todos is off")
	set := read(t, settings)
	assert.True(t, strings.HasPrefix(set, "// my Gemini CLI settings\r\n{\r\n  /* API key, no telemetry */\r\n"), "%q", set)
	assert.Contains(t, set, "\"model\": {\"name\": \"gemini-2.5-flash\"}, // the fast one\r\n")
	assert.NotContains(t, strings.ReplaceAll(set, "\r\n", ""), "\n", "every line ends in CRLF")
	h.Setup(t, "gemini")
	assert.Equal(t, set, read(t, settings), "a second setup changed settings.json")
	h.Setup(t, "gemini", "--uninstall")
	assert.Equal(t, userSettings, read(t, settings), "--uninstall did not give back the user's settings.json")

	// In -p mode Gemini CLI offers write_todos only when it needs no
	// approval (yolo): without setup it is there, the check that its
	// absence after setup is setup's doing.
	yolo := []string{"--approval-mode", "yolo"}
	h.Run(t, "Hello.", yolo...)
	require.Len(t, h.API.Main(), 1, h.API.Dump())
	assert.True(t, h.API.Main()[0].HasTool("write_todos"), "without setup, write_todos is not offered: %v", h.API.Main()[0].ToolNames())

	h.Setup(t, "gemini")
	res := h.Run(t, "Plan the parser work.", yolo...)
	main := h.API.Main()[1:]
	require.NotEmpty(t, main, h.API.Dump())
	assert.Contains(t, main[0].Model, "gemini-2.5-flash", "the model of the user's settings.json")
	for _, name := range []string{gemini.TaskCreate, gemini.TaskList, gemini.TaskGet, gemini.TaskUpdate} {
		assert.True(t, main[0].HasTool(name), "%s not offered: %v", name, main[0].ToolNames())
	}
	assert.False(t, main[0].HasTool("write_todos"), "Gemini CLI's own write_todos is offered beside ours")
	assert.Equal(t, []string{"1 pending Write the parser"}, h.Daemon.Subjects(t, res.SessionID))
	var events []string
	for _, r := range h.Rec.Hooks() {
		events = append(events, r.Event)
	}
	assert.Contains(t, events, "SessionStart")
	assert.Contains(t, events, "BeforeModel")

	bad := strings.Replace(userSettings, "// the fast one", ", // a trailing comma Gemini CLI does not read", 1)
	require.NoError(t, os.WriteFile(settings, []byte(bad), 0o600))
	msg, err := h.RunTSD([]string{"setup", "gemini", "--bin", h.Rec.Bin})
	require.Error(t, err, msg)
	assert.Contains(t, msg, settings)
	assert.Contains(t, msg, "trailing comma")
	assert.Equal(t, bad, read(t, settings))
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
