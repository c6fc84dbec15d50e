package gemini_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/gemini"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestNewUserFromNPM ensures a user with Node and no Go who follows the
// README's two lines for Gemini CLI gets a task created inside it:
// tasksessiond installed with npm (this tree's snapshot release, its
// tarballs into an empty prefix, offline), then the repository's extension
// installed with "gemini extensions install" (from this tree, not GitHub:
// the same files), the tools allowed as the README says, no daemon
// running and no TASKSESSIOND_* variable set: the default socket and
// database, which the user's own HOME and TMPDIR, the test's, put out of
// the machine's way. The model's first TaskCreate has the extension's MCP
// server, npm's tasksessiond on PATH, start the daemon (the release's
// version) and gets #1, and "tasksessiond tasks" shows the task. No go
// command is on the PATH of any of it.
func TestNewUserFromNPM(t *testing.T) {
	t.Parallel()
	npm, path, tsd := harness.NewUser(t, "npm install -g tasksessiond", "gemini extensions install https://github.com/tasksessiond/tasksessiond ")
	root, err := harness.RepoRoot()
	require.NoError(t, err)

	script := modelapi.NewScript(
		modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Try tasksessiond"})),
		modelapi.Text("Created."),
	)
	h := gemini.New(t, gemini.Options{Respond: script.Respond, NoSetup: true, NoDaemon: true})
	h.ExtraEnv = append(h.ExtraEnv, "PATH="+path)
	gemini.UseExtension(t, h, root, false)
	// The user's default socket and database, not the harness daemon's
	// variables (which UseExtension sets).
	h.UseDefaultPaths()

	res := h.Run(t, "Make a task.")
	require.True(t, script.Done(), h.API.Dump())
	assert.Equal(t, "Created.", res.Message)
	main := h.API.Main()
	require.Len(t, main, 2, h.API.Dump())
	assert.Contains(t, result(t, main[1], gemini.TaskCreate), "#1")
	assert.Equal(t, []string{"1 pending Try tasksessiond"}, h.Daemon.Subjects(t, res.SessionID))
	// The daemon the MCP server started is npm's tasksessiond.
	assert.Equal(t, npm.Version, h.Daemon.Status(t).Version)

	tasks := exec.Command(tsd, "tasks", res.SessionID)
	tasks.Dir, tasks.Env = h.Project, h.Env()
	out, err := tasks.CombinedOutput()
	require.NoError(t, err, "tasksessiond tasks: %s", out)
	assert.True(t, strings.Contains(string(out), "Try tasksessiond"), "tasksessiond tasks %s:\n%s", res.SessionID, out)
}
