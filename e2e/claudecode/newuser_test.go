package claudecode_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// The README's install lines for a user with Node (the first for every
// host, the second for Claude Code).
const (
	readmeNPM    = "npm install -g tasksessiond"
	readmeClaude = "claude plugin install tasksessiond --marketplace tasksessiond/tasksessiond"
)

// TestNewUserFromNPM ensures a user with Node and no Go who follows the
// README gets a task created inside Claude Code: tasksessiond installed
// with npm (this tree's snapshot release, its tarballs installed into an
// empty prefix, offline), "tasksessiond version" printing the stamped
// version, the plugin installed with the README's line (the repository
// for the GitHub source), no daemon running and nothing else configured;
// the model's first TaskCreate starts the daemon (the npm-installed
// binary) and gets #1. No go command is on the PATH of any of it.
func TestNewUserFromNPM(t *testing.T) {
	t.Parallel()
	npm, path, tsd := harness.NewUser(t, readmeNPM, readmeClaude)
	root, err := harness.RepoRoot()
	require.NoError(t, err)
	version := exec.Command(tsd, "version")
	version.Env = []string{"PATH=" + path, "HOME=" + t.TempDir()}
	out, err := version.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.True(t, strings.HasPrefix(string(out), "tasksessiond "+npm.Version+" (commit "), "tasksessiond version: %s", out)
	real, err := filepath.EvalSymlinks(tsd)
	require.NoError(t, err)
	head := make([]byte, 4)
	f, err := os.Open(real)
	require.NoError(t, err)
	f.Read(head)
	f.Close()
	assert.Equal(t, "\x7fELF", string(head), "npm's tasksessiond is not the binary itself after its first run (the launcher did not put it in its place): each hook would start Node")

	script := modelapi.NewScript(
		pLoad,
		modelapi.Call(pCreate, map[string]any{"subject": "Try tasksessiond"}),
		modelapi.Text("Created."),
	)
	h := claudecode.New(t, claudecode.Options{Respond: script.Respond, NoHook: true, NoDaemon: true})
	h.ExtraEnv = append(h.ExtraEnv, "PATH="+path)
	h.Unconfigure(t)
	h.Install(t, root)

	id := uuid.NewString()
	res := h.Print(t, "Make a task.", "--session-id", id)
	require.True(t, script.Done(), h.API.Dump())
	assert.Equal(t, "Created.", res.Result)
	main := h.API.Main()
	require.Len(t, main, 3, h.API.Dump())
	created := toolJSON(t, main[2].PendingToolResults()[0])
	assert.Contains(t, created["message"], "#1")
	assert.Equal(t, []string{"1 pending Try tasksessiond"}, h.Daemon.Subjects(t, id))
}
