package copilot_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/copilot"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
)

func TestSetupCorpus(t *testing.T) {
	// Ensures, for mcp-config.json as users keep it (none, comments and
	// CRLF, a link, a hooks file of their own beside setup's, a tasks
	// server of their own), that the pinned copilot reads what setup
	// wrote (copilot mcp list), a second setup changes no byte and
	// --uninstall gives back the user's bytes; or that setup refuses,
	// changing nothing (harness.SetupCorpus).
	t.Parallel()
	h := copilot.New(t, copilot.Options{NoSetup: true})
	mine := "{\r\n  // mine\r\n  \"mcpServers\": {\r\n    \"other\": {\"type\": \"local\", \"command\": \"other-server\", \"args\": [], \"tools\": [\"*\"]} /* kept */\r\n  }\r\n}\r\n"
	cases := []harness.CorpusCase{
		{Name: "None", Edit: func(f map[string]string) {}},
		{Name: "CommentsCRLF", Edit: func(f map[string]string) { f["mcp-config.json"] = mine }},
		{Name: "Link", Edit: func(f map[string]string) { f["mcp-config.json"] = mine }, Links: []string{"mcp-config.json"}},
		{Name: "HooksOfTheirOwn", Edit: func(f map[string]string) {
			f["hooks/mine.json"] = "{\"version\": 1, \"hooks\": {\"sessionStart\": [{\"type\": \"command\", \"bash\": \"true\"}]}}\n"
		}},
		{Name: "TasksOfTheirOwn", Refused: "tasks is a server of yours", Edit: func(f map[string]string) {
			f["mcp-config.json"] = `{"mcpServers": {"tasks": {"type": "local", "command": "tasksessiond", "args": ["mcp", "--session", "team-list"], "tools": ["*"], "timeout": 9000}}}` + "\n"
		}},
	}
	h.SetupCorpus(t, "copilot", h.CopilotHome, cases, func(t *testing.T, setUp bool) {
		out := h.Command(t, 90*time.Second, "mcp", "list")
		require.NoError(t, out.Err, "copilot cannot read its MCP config: %s%s", out.Stdout, out.Stderr)
		if setUp {
			assert.Regexp(t, `(?m)^\s*tasks \(local\)`, out.Stdout+out.Stderr)
		}
	})
}
