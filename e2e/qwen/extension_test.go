package qwen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/qwen"
)

// The repository's Gemini CLI extension, installed by Qwen Code ("qwen
// extensions install DIR", no setup): its MCP server gives the model the four
// tools (mcp__tasks__...), bound to the Qwen session; on resume its
// SessionStart hook ("tasksessiond hook gemini", which under Qwen Code is
// Qwen Code's hook) puts the list before the model, naming the tools as
// Qwen Code shows them.
func TestGeminiExtension(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := qwen.New(t, qwen.Options{Respond: p.Respond, NoSetup: true})
	h.Path = append([]string{filepath.Dir(h.Rec.Bin)}, h.Path...)
	h.Vars = append(h.Vars, h.Daemon.Env()...)
	root, err := harness.RepoRoot()
	require.NoError(t, err)
	// The extension alone (gemini-extension.json, hooks/): from the
	// repository itself, Qwen Code offers the Claude Code plugin of its
	// marketplace (.claude-plugin/) instead, and asks which.
	ext := filepath.Join(h.Root, "extension")
	h.Mkdir(filepath.Join(ext, "hooks"))
	for _, f := range []string{"gemini-extension.json", filepath.Join("hooks", "hooks.json")} {
		b, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		h.WriteFile(filepath.Join(ext, f), string(b), 0o600)
	}
	out := h.Command(t, 120*time.Second, "extensions", "install", ext, "--consent")
	require.NoError(t, out.Err, "%s\n%s", out.Stdout, out.Stderr)

	p.Set(modelapi.NewScript(
		viaBridge(qwen.TaskCreate, map[string]any{"subject": "Write the parser"}),
		modelapi.Text("ok"),
	))
	a := h.Run(t, "Plan.").SessionID
	assert.Equal(t, []string{"#1 pending Write the parser"}, tasks(h.Daemon.Resume(t, a).Tasks))

	n := len(h.API.Main())
	p.Set(modelapi.NewScript(
		viaBridge(qwen.TaskCreate, map[string]any{"subject": "Test the parser"}),
		modelapi.Text("ok"),
	))
	h.Run(t, "Go on.", "--resume", a)
	var ctx string
	for _, r := range h.Hooks("SessionStart") {
		if r.Source == "resume" {
			ctx = r.Context
		}
	}
	require.NotEmpty(t, ctx, "the extension's resume hook gave the list:\n%s", h.Rec.Dump())
	assert.Contains(t, ctx, "#1 [pending] Write the parser")
	assert.Contains(t, ctx, qwen.TaskCreate+" gets #2", "the tools named as Qwen Code shows them")
	assert.Contains(t, h.API.Main()[n].AllText(), ctx, "the list reached the model")
	assert.Equal(t, []string{"#1 pending Write the parser", "#2 pending Test the parser"}, tasks(h.Daemon.Resume(t, a).Tasks))
	b, _ := os.ReadFile(filepath.Join(h.Home, ".qwen", "settings.json"))
	assert.False(t, strings.Contains(string(b), "mcpServers"), "no setup: the tools are the extension's")
}
