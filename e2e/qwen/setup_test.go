package qwen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/qwen"
)

// "tasksessiond setup qwen --project", in a project, sets up its
// .qwen/settings.json, which Qwen Code reads there: the tools and the
// hook; setup says Qwen Code's own todo_write stays off; --uninstall
// takes out all it added.
func TestSetupProject(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := qwen.New(t, qwen.Options{Respond: p.Respond, NoSetup: true})
	out := h.Setup(t, "qwen", "--project")
	assert.Contains(t, out, "todo_write stays off")
	user, err := os.ReadFile(filepath.Join(h.Home, ".qwen", "settings.json"))
	require.NoError(t, err)
	assert.False(t, strings.Contains(string(user), "tasksessiond"), "the user's settings are not touched")
	p.Set(modelapi.NewScript(viaBridge(qwen.TaskCreate, map[string]any{"subject": "Alpha"}), modelapi.Text("ok")))
	a := h.Run(t, "Plan.").SessionID
	assert.Equal(t, []string{"#1 pending Alpha"}, tasks(h.Daemon.Resume(t, a).Tasks))
	assert.NotEmpty(t, h.Hooks("SessionStart"), "the project's hook ran")

	h.Setup(t, "qwen", "--project", "--uninstall")
	// Qwen Code wrote its own "$version" into the file setup made: that
	// stays; nothing of setup's does.
	b, err := os.ReadFile(filepath.Join(h.Project, ".qwen", "settings.json"))
	if err == nil {
		assert.NotContains(t, string(b), "tasksessiond", "nothing of setup's is left")
	}
}
