package claudecode_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
)

// userSettings is a settings.json as a user may keep it: Claude Code reads
// strict JSON (a comment makes it skip the whole file), with a byte order
// mark and CRLF line ends; a setting of the user's (env) that reaches the
// MCP server shows the file was read.
const userSettings = "\ufeff{\r\n  \"env\": {\r\n    \"E2E_USER_SETTING\": \"kept\"\r\n  },\r\n  \"permissions\": {\r\n    \"allow\": [\"Bash(git status)\"]\r\n  }\r\n}\r\n"

func TestSetup(t *testing.T) {
	// Ensures "tasksessiond setup claude-code" on a user's settings.json
	// keeps the user's settings (Claude Code reads them: their env reaches
	// the MCP server), gives the model the four tools and not Claude
	// Code's own to-do tools, runs the hook; a second run changes no
	// byte, --uninstall gives back the user's files byte for byte, and a
	// settings.json Claude Code cannot read is refused and left as it was.
	t.Parallel()
	script := planScript()
	h := claudecode.New(t, claudecode.Options{Respond: script.Respond, SettingsFile: userSettings, NoSetup: true})
	settings, state := filepath.Join(h.Config, "settings.json"), filepath.Join(h.Config, ".claude.json")
	origState := read(t, state)

	// The bytes first: Claude Code rewrites settings.json as it runs (its
	// migrations), so they are compared before it runs.
	out := h.Setup(t, "claude-code")
	assert.Contains(t, out, "note: Claude Code's own to-do tools")
	set, setState := read(t, settings), read(t, state)
	assert.True(t, strings.HasPrefix(set, "\ufeff{\r\n  \"env\": {\r\n    \"E2E_USER_SETTING\": \"kept\"\r\n  },"), "the user's lines are kept:\n%q", set)
	assert.NotContains(t, strings.ReplaceAll(set, "\r\n", ""), "\n", "every line ends in CRLF")
	h.Setup(t, "claude-code")
	assert.Equal(t, set, read(t, settings), "a second setup changed settings.json")
	assert.Equal(t, setState, read(t, state), "a second setup changed .claude.json")
	h.Setup(t, "claude-code", "--uninstall")
	assert.Equal(t, userSettings, read(t, settings), "--uninstall did not give back the user's settings.json")
	assert.Equal(t, origState, read(t, state), "--uninstall did not give back the user's .claude.json")
	h.Setup(t, "claude-code")

	id := uuid.NewString()
	res := h.Print(t, "Plan the parser work.", "--session-id", id)
	assert.Equal(t, "Two tasks planned.", res.Result)
	require.True(t, script.Done(), h.API.Dump())
	main := h.API.Main()
	// Claude Code lists its deferred tools one per line (without the
	// deny rules setup adds, "TaskCreate", "TaskGet", "TaskList" are
	// there, and its prompt says "Use TaskCreate to plan").
	for _, own := range []string{"TaskCreate", "TaskList", "TaskGet", "TaskUpdate", "TodoWrite"} {
		assert.False(t, main[0].HasTool(own), "Claude Code's own %s is offered beside ours", own)
		assert.NotRegexp(t, `(?m)^`+own+`$`, main[0].AllText(), "Claude Code's own %s is listed beside ours", own)
	}
	assert.NotContains(t, main[0].AllText(), "Use TaskCreate")
	for _, name := range []string{taskCreate, taskList, taskGet, taskUpdate} {
		assert.True(t, main[1].HasTool(name), "%s not offered after ToolSearch", name)
	}
	require.Len(t, h.Daemon.Resume(t, id).Tasks, 2)
	require.NotEmpty(t, h.Hooks(), "the SessionStart hook did not run")
	assert.Equal(t, id, h.Hooks()[0].SessionID)
	starts := h.Rec.MCPStarts()
	require.NotEmpty(t, starts)
	assert.Contains(t, starts[0].Env, "E2E_USER_SETTING", "the user's env setting did not reach the MCP server: was settings.json read?")

	bad := "{\n  // Claude Code skips a file with a comment\n  \"env\": {}\n}\n"
	require.NoError(t, os.WriteFile(settings, []byte(bad), 0o600))
	out, err := h.RunTSD([]string{"setup", "claude-code", "--bin", h.Rec.Bin})
	require.Error(t, err, out)
	assert.Contains(t, out, settings)
	assert.Contains(t, out, "not strict JSON")
	assert.Equal(t, bad, read(t, settings))
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
