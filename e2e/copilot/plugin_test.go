package copilot_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/copilot"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// The repository's Claude Code plugin (contrib/claude-code), loaded by
// Copilot CLI (--plugin-dir) with no setup: its MCP server gives the model
// tasks-TaskCreate and so on, bound to the Copilot session; on resume its
// SessionStart hook (Claude Code's, run by Copilot CLI) puts the list
// before the model, naming the tools as Copilot CLI shows them.
func TestClaudeCodePlugin(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := copilot.New(t, copilot.Options{Respond: p.Respond, NoSetup: true})
	// The plugin runs "tasksessiond" from PATH: the recording wrapper,
	// on the test's daemon.
	h.Path = append([]string{filepath.Dir(h.Rec.Bin)}, h.Path...)
	h.ExtraEnv = append(h.ExtraEnv, "TASKSESSIOND_SOCKET="+h.Daemon.Socket, "TASKSESSIOND_DB="+h.Daemon.DB)
	root, err := harness.RepoRoot()
	require.NoError(t, err)
	plugin := []string{"--plugin-dir", filepath.Join(root, "contrib", "claude-code")}

	p.Set(modelapi.NewScript(
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Write the parser"}),
		modelapi.Text("ok"),
	))
	a := h.Run(t, "Plan.", plugin...).SessionID
	assert.Equal(t, []string{"#1 pending Write the parser"}, tasks(h.Daemon.Resume(t, a).Tasks))

	n := len(h.API.Main())
	p.Set(modelapi.NewScript(
		modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Test the parser"}),
		modelapi.Text("ok"),
	))
	h.Run(t, "Go on.", append([]string{"--resume", a}, plugin...)...)
	starts := h.Hooks("SessionStart")
	require.Len(t, starts, 2, h.Rec.Dump())
	ctx := hookContext(t, starts[1].Output)
	require.NotEmpty(t, ctx, "the plugin's resume hook gave the list")
	assert.Contains(t, ctx, "#1 [pending] Write the parser")
	assert.Contains(t, ctx, copilot.TaskCreate+" gets #2", "the tools named as Copilot CLI shows them")
	assert.NotContains(t, ctx, "mcp__")
	assert.Contains(t, h.API.Main()[n].AllText(), ctx, "the list reached the model")
	assert.Equal(t, []string{"#1 pending Write the parser", "#2 pending Test the parser"}, tasks(h.Daemon.Resume(t, a).Tasks))
}
