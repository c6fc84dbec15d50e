package opencode_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/opencode"
)

// TestNewUserFromNPM ensures a user with Node and no Go who follows the
// README's two lines for OpenCode gets a task created inside it:
// tasksessiond installed with npm (this tree's snapshot release, its
// tarballs into an empty prefix, offline), the plugin installed with
// OpenCode's own command from the release's tarball as the published
// package installs (see UseNPMPlugin), no daemon running; the model's first
// TaskCreate has the plugin start the daemon, with the npm-installed
// tasksessiond, and gets #1. No go command is on the PATH of any of it.
func TestNewUserFromNPM(t *testing.T) {
	t.Parallel()
	npm, path, _ := harness.NewUser(t, "npm install -g tasksessiond", "opencode plugin opencode-tasksessiond --global")
	_, _, tarball, _ := harness.NPMRelease(t)

	var p modelapi.Phases
	h := opencode.New(t, opencode.Options{Respond: p.Respond, NoDaemon: true})
	h.ExtraEnv = append(h.ExtraEnv, "PATH="+path)
	h.UseNPMPlugin(tarball)
	p.Set(modelapi.NewScript(
		modelapi.Call("TaskCreate", map[string]any{"subject": "Try tasksessiond"}),
		modelapi.Text("Created."),
	))
	a := h.Run(t, "Make a task.").SessionID
	main := h.API.Main()
	require.Len(t, main, 2, h.API.Dump())
	assert.Contains(t, result(t, main[1], "TaskCreate"), "#1")
	assert.Equal(t, []string{"1 pending Try tasksessiond"}, h.Daemon.Subjects(t, a))

	// The daemon the plugin started is npm's tasksessiond: the release's
	// stamped version (the harness's own binary is a devel build).
	assert.Equal(t, npm.Version, h.Daemon.Status(t).Version)
}
