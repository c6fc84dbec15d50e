package copilot_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/copilot"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// "tasksessiond setup copilot --project", in a project, sets it up
// (.github/mcp.json, .github/hooks/tasksessiond.json), and Copilot CLI,
// run there in a trusted folder, offers the tools and runs the hooks;
// --uninstall takes both files away.
func TestSetupProject(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := copilot.New(t, copilot.Options{Respond: p.Respond, NoSetup: true})
	h.Setup(t, "copilot", "--project") // the run's directory is the project
	assert.NoFileExists(t, filepath.Join(h.CopilotHome, "mcp-config.json"), "the user's files are not touched")
	h.ExtraEnv = append(h.ExtraEnv, "COPILOT_ALLOW_ALL=true") // trusts the folder, so its configuration loads
	p.Set(modelapi.NewScript(modelapi.Call(copilot.TaskCreate, map[string]any{"subject": "Alpha"}), modelapi.Text("ok")))
	a := h.Run(t, "Plan.").SessionID
	assert.True(t, h.API.Main()[0].HasTool(copilot.TaskCreate), "the project's server is offered: %v", h.API.Main()[0].ToolNames())
	assert.Equal(t, []string{"#1 pending Alpha"}, tasks(h.Daemon.Resume(t, a).Tasks))
	assert.NotEmpty(t, h.Hooks("source"), "the project's sessionStart hook ran")

	h.Setup(t, "copilot", "--project", "--uninstall")
	for _, f := range []string{filepath.Join(".github", "mcp.json"), filepath.Join(".github", "hooks", "tasksessiond.json")} {
		_, err := os.Stat(filepath.Join(h.Project, f))
		require.True(t, os.IsNotExist(err), "%s was taken away", f)
	}
}
