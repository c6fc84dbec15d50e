package qwen_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/qwen"
)

// TestNewUserFromNPM ensures a user with Node and no Go who follows the
// README's two lines for Qwen Code gets a task created inside it:
// tasksessiond installed with npm (this tree's snapshot release, its
// tarballs into an empty prefix, offline), then "tasksessiond setup qwen"
// as written (no flags: the default socket and database, which the user's
// own HOME and TMPDIR, the test's, put out of the machine's way), no
// daemon running. The model's first TaskCreate has the MCP server start
// the daemon (npm's tasksessiond, the release's version) and gets #1, and
// "tasksessiond tasks" shows the task. No go command is on the PATH of any
// of it.
func TestNewUserFromNPM(t *testing.T) {
	t.Parallel()
	npm, path, tsd := harness.NewUser(t, "npm install -g tasksessiond", "tasksessiond setup qwen ")

	script := modelapi.NewScript(
		load,
		modelapi.Call(qwen.TaskCreate, map[string]any{"subject": "Try tasksessiond"}),
		modelapi.Text("Created."),
	)
	h := qwen.New(t, qwen.Options{Respond: script.Respond, NoSetup: true, NoDaemon: true})
	h.ExtraEnv = append(h.ExtraEnv, "PATH="+path)
	h.UseDefaultPaths() // the user's default socket and database, out of the machine's way

	setup := exec.Command(tsd, "setup", "qwen")
	setup.Dir, setup.Env = h.Project, h.Env()
	out, err := setup.CombinedOutput()
	require.NoError(t, err, "tasksessiond setup qwen: %s", out)
	cfg, err := os.ReadFile(filepath.Join(h.Home, ".qwen", "settings.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(cfg), "TASKSESSIOND_SOCKET", "setup as written names no socket")

	res := h.Run(t, "Make a task.")
	require.True(t, script.Done(), h.API.Dump())
	assert.Equal(t, "Created.", res.Message)
	main := h.API.Main()
	require.Len(t, main, 3, h.API.Dump())
	created := main[2].ToolResults(qwen.TaskCreate)
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
