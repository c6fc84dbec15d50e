package opencode_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/opencode"
)

// TestNPMPlugin ensures the README's OpenCode line works with the plugin's
// npm package (opencode-tasksessiond, from this tree's snapshot release):
// OpenCode's own command ("opencode plugin <spec> --global") installs the
// release's tarball as it would the published package, and the model's
// TaskCreate reaches the daemon and gets #1, its TaskList shows it, and a
// continued session goes on with #2.
func TestNPMPlugin(t *testing.T) {
	t.Parallel()
	root, err := harness.RepoRoot()
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	require.Contains(t, string(readme), "opencode plugin opencode-tasksessiond --global", "the README's OpenCode line changed: change this test with it")
	_, _, tarball, _ := harness.NPMRelease(t)
	var p modelapi.Phases
	h := opencode.New(t, opencode.Options{Respond: p.Respond})
	h.UseNPMPlugin(tarball)

	p.Set(modelapi.NewScript(
		modelapi.Call("TaskCreate", map[string]any{"subject": "Write the parser"}),
		modelapi.Call("TaskList", nil),
		modelapi.Text("Planned."),
	))
	a := h.Run(t, "Plan the parser work.").SessionID
	main := h.API.Main()
	require.Len(t, main, 3, h.API.Dump())
	assert.Contains(t, result(t, main[1], "TaskCreate"), "#1")
	assert.Contains(t, result(t, main[2], "TaskList"), "Write the parser")

	n := len(h.API.Main())
	p.Set(modelapi.NewScript(
		modelapi.Call("TaskCreate", map[string]any{"subject": "Test the parser"}),
		modelapi.Text("Two."),
	))
	h.Run(t, "Go on.", "--session", a)
	main = since(h, n)
	require.Len(t, main, 2, h.API.Dump())
	assert.Contains(t, result(t, main[1], "TaskCreate"), "#2")
	s := h.Daemon.Resume(t, a)
	require.Len(t, s.Tasks, 2)
	assert.Equal(t, "Test the parser", s.Tasks[1].Subject)
}
