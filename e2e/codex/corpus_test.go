package codex_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/codex"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
)

func TestSetupCorpus(t *testing.T) {
	// Ensures, for config.toml and hooks.json as users keep them
	// (comments, CRLF, a link, a hook of their own trusted, an inline
	// table, a tasks server of their own), that the pinned codex reads
	// what setup wrote, a second setup changes no byte and --uninstall
	// gives back the user's bytes; or that setup refuses, changing
	// nothing (harness.SetupCorpus).
	t.Parallel()
	h := codex.New(t, codex.Options{NoSetup: true})
	hooks := filepath.Join(h.CodexHome, "hooks.json")
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	cases := []harness.CorpusCase{
		{Name: "CommentsCRLF", Edit: func(f map[string]string) {
			f["config.toml"] = crlf("# my Codex\n" + f["config.toml"] + "\n[mcp_servers.gh] # mine\ncommand = \"npx\" # not started\nenabled = false\n")
		}},
		{Name: "Link", Edit: func(f map[string]string) {}, Links: []string{"config.toml"}},
		{Name: "HookOfTheirOwn", Edit: func(f map[string]string) {
			f["hooks.json"] = "{\n  \"hooks\": {\n    \"SessionStart\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"echo mine\"\n          }\n        ]\n      }\n    ]\n  }\n}\n"
			f["config.toml"] += "\n[hooks.state.\"" + hooks + ":session_start:0:0\"]\nenabled = true\ntrusted_hash = \"sha256:mine\"\n"
		}},
		{Name: "InlineTable", Refused: "inline table", Edit: func(f map[string]string) {
			f["config.toml"] = "mcp_servers = { gh = { command = \"npx\", enabled = false } }\n" + f["config.toml"]
		}},
		{Name: "TasksOfTheirOwn", Refused: "tasks is a server of yours", Edit: func(f map[string]string) {
			f["config.toml"] += "\n[mcp_servers.tasks]\ncommand = \"tasksessiond\"\nargs = [\"mcp\", \"--session\", \"team-list\"]\nenabled = false\n"
		}},
	}
	h.SetupCorpus(t, "codex", h.CodexHome, cases, func(t *testing.T, setUp bool) {
		out := h.Command(t, 60*time.Second, "mcp", "list", "--json")
		require.NoError(t, out.Err, "codex cannot read its config: %s", out.Stderr)
		if setUp {
			assert.Contains(t, out.Stdout, `"tasks"`)
		}
	})
}
