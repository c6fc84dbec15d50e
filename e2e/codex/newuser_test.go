package codex_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/codex"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestNewUserFromNPM ensures a user with Node and no Go who follows the
// README's two lines for Codex CLI gets a task created inside it:
// tasksessiond installed with npm (this tree's snapshot release, its
// tarballs into an empty prefix, offline), then "tasksessiond setup codex"
// as written (no flags: the default socket and database, which the user's
// own HOME and TMPDIR, the test's, put out of the machine's way), no
// daemon running. The model's first TaskCreate has the MCP server start
// the daemon (npm's tasksessiond, the release's version) and gets #1, and
// "tasksessiond tasks" shows the task. No go command is on the PATH of any
// of it.
func TestNewUserFromNPM(t *testing.T) {
	t.Parallel()
	npm, path, tsd := harness.NewUser(t, "npm install -g tasksessiond", "tasksessiond setup codex ")

	script := modelapi.NewScript(
		loadTools,
		modelapi.Call(taskCreate, map[string]any{"subject": "Try tasksessiond"}),
		modelapi.Text("Created."),
	)
	h := codex.New(t, codex.Options{Respond: script.Respond, NoSetup: true, NoDaemon: true})
	h.ExtraEnv = append(h.ExtraEnv, "PATH="+path)
	h.UseDefaultPaths() // the user's default socket and database, out of the machine's way

	setup := exec.Command(tsd, "setup", "codex")
	setup.Dir, setup.Env = h.Project, h.Env()
	out, err := setup.CombinedOutput()
	require.NoError(t, err, "tasksessiond setup codex: %s", out)
	cfg := read(t, filepath.Join(h.CodexHome, "config.toml"))
	assert.Contains(t, cfg, "[mcp_servers.tasks]")
	assert.NotContains(t, cfg, "TASKSESSIOND_SOCKET", "setup as written names no socket")

	res := h.Exec(t, "Make a task.")
	require.True(t, script.Done(), h.API.Dump())
	assert.Equal(t, "Created.", res.Message)
	main := h.API.Main()
	require.Len(t, main, 3, h.API.Dump())
	assert.Contains(t, toolJSON(t, pending(t, main[2]))["message"], "#1")
	require.NotEmpty(t, res.ThreadID)
	assert.Equal(t, []string{"1 pending Try tasksessiond"}, h.Daemon.Subjects(t, res.ThreadID))
	// The daemon the MCP server started is npm's tasksessiond.
	assert.Equal(t, npm.Version, h.Daemon.Status(t).Version)

	tasks := exec.Command(tsd, "tasks", res.ThreadID)
	tasks.Dir, tasks.Env = h.Project, h.Env()
	out, err = tasks.CombinedOutput()
	require.NoError(t, err, "tasksessiond tasks: %s", out)
	assert.True(t, strings.Contains(string(out), "Try tasksessiond"), "tasksessiond tasks %s:\n%s", res.ThreadID, out)
}
