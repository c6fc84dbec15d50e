package copilot_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/copilot"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestNewUserFromNPM ensures a user with Node and no Go who follows the
// README's two lines for GitHub Copilot CLI gets a task created inside it:
// tasksessiond installed with npm (this tree's snapshot release, its
// tarballs into an empty prefix, offline), then "tasksessiond setup
// copilot" as written (no flags: the default socket and database, which
// the user's own HOME and TMPDIR, the test's, put out of the machine's
// way), no daemon running. The model's first TaskCreate has the MCP server
// start the daemon (npm's tasksessiond, the release's version) and gets
// #1, and "tasksessiond tasks" shows the task. No go command is on the
// PATH of any of it.
func TestNewUserFromNPM(t *testing.T) {
	t.Parallel()
	npm, path, tsd := harness.NewUser(t, "npm install -g tasksessiond", "tasksessiond setup copilot ")

	script := modelapi.NewScript(
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Try tasksessiond"}),
		modelapi.Text("Created."),
	)
	h := copilot.New(t, copilot.Options{Respond: script.Respond, NoSetup: true, NoDaemon: true})
	h.ExtraEnv = append(h.ExtraEnv, "PATH="+path)
	h.UseDefaultPaths() // the user's default socket and database, out of the machine's way

	setup := exec.Command(tsd, "setup", "copilot")
	setup.Dir, setup.Env = h.Project, h.Env()
	out, err := setup.CombinedOutput()
	require.NoError(t, err, "tasksessiond setup copilot: %s", out)
	cfg, err := os.ReadFile(filepath.Join(h.CopilotHome, "mcp-config.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(cfg), "TASKSESSIOND_SOCKET", "setup as written names no socket")

	res := h.Run(t, "Make a task.")
	require.True(t, script.Done(), h.API.Dump())
	require.NotEmpty(t, res.SessionID)
	main := h.API.Main()
	require.Len(t, main, 2, h.API.Dump())
	created := main[1].ToolResults(copilot.TaskCreate)
	require.NotEmpty(t, created, h.API.Dump())
	assert.Contains(t, created[0].Text, "#1")
	assert.Equal(t, []string{"#1 pending Try tasksessiond"}, tasks(h.Daemon.Resume(t, res.SessionID).Tasks))
	// The daemon the MCP server started is npm's tasksessiond.
	assert.Equal(t, npm.Version, h.Daemon.Status(t).Version)

	list := exec.Command(tsd, "tasks", res.SessionID)
	list.Dir, list.Env = h.Project, h.Env()
	out, err = list.CombinedOutput()
	require.NoError(t, err, "tasksessiond tasks: %s", out)
	assert.True(t, strings.Contains(string(out), "Try tasksessiond"), "tasksessiond tasks %s:\n%s", res.SessionID, out)
}
