package qwen_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/qwen"
)

func TestSetupCorpus(t *testing.T) {
	// Ensures, for settings.json as users keep it (comments and CRLF, a
	// link, a SessionStart hook of their own, a tasks server of their
	// own), that the pinned qwen reads what setup wrote (qwen mcp list),
	// a second setup changes no byte and --uninstall gives back the
	// user's bytes; or that setup refuses, changing nothing
	// (harness.SetupCorpus).
	t.Parallel()
	h := qwen.New(t, qwen.Options{NoSetup: true})
	cases := []harness.CorpusCase{
		{Name: "CommentsCRLF", Edit: func(f map[string]string) {
			f["settings.json"] = strings.ReplaceAll("// my Qwen settings\n"+strings.Replace(f["settings.json"], "{", "{ /* mine */", 1), "\n", "\r\n")
		}},
		{Name: "Link", Edit: func(f map[string]string) {}, Links: []string{"settings.json"}},
		{Name: "HookOfTheirOwn", Edit: func(f map[string]string) {
			f["settings.json"] = strings.Replace(f["settings.json"], "{", `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "true"}]}]},`, 1)
		}},
		{Name: "TasksOfTheirOwn", Refused: "tasks is a server of yours", Edit: func(f map[string]string) {
			f["settings.json"] = strings.Replace(f["settings.json"], "{", `{"mcpServers": {"tasks": {"command": "tasksessiond", "args": ["mcp", "--session", "team-list"], "timeout": 9000}},`, 1)
		}},
	}
	h.SetupCorpus(t, "qwen", filepath.Join(h.Home, ".qwen"), cases, func(t *testing.T, setUp bool) {
		out := h.Command(t, 90*time.Second, "mcp", "list")
		require.NoError(t, out.Err, "qwen cannot read its settings: %s%s", out.Stdout, out.Stderr)
		if setUp {
			assert.Contains(t, out.Stdout+out.Stderr, "tasks: ")
		}
	})
}
