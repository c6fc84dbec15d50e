package claudecode_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
)

func TestSetupCorpus(t *testing.T) {
	// Ensures, for settings.json and .claude.json as users keep them (a
	// BOM and CRLF, a link, an empty file, another server, a tasks
	// server of their own), that the pinned claude reads what setup
	// wrote (claude mcp list), a second setup changes no byte and
	// --uninstall gives back the user's bytes; or that setup refuses,
	// changing nothing (harness.SetupCorpus).
	t.Parallel()
	h := claudecode.New(t, claudecode.Options{NoSetup: true})
	server := func(f map[string]string, name string, s map[string]any) {
		var state map[string]any
		require.NoError(t, json.Unmarshal([]byte(f[".claude.json"]), &state))
		servers, _ := state["mcpServers"].(map[string]any)
		if servers == nil {
			servers = map[string]any{}
		}
		servers[name] = s
		state["mcpServers"] = servers
		b, err := json.MarshalIndent(state, "", "  ")
		require.NoError(t, err)
		f[".claude.json"] = string(b) + "\n"
	}
	cases := []harness.CorpusCase{
		{Name: "BOMCRLF", Edit: func(f map[string]string) {
			f["settings.json"] = "\ufeff" + strings.ReplaceAll(f["settings.json"], "\n", "\r\n")
		}},
		{Name: "Link", Edit: func(f map[string]string) {}, Links: []string{"settings.json"}},
		{Name: "Empty", Edit: func(f map[string]string) { f["settings.json"] = "" }},
		{Name: "AnotherServer", Edit: func(f map[string]string) {
			server(f, "other", map[string]any{"type": "stdio", "command": "/bin/cat", "args": []any{}})
		}},
		{Name: "TasksOfTheirOwn", Refused: "tasks is a server of yours", Edit: func(f map[string]string) {
			server(f, "tasks", map[string]any{"type": "stdio", "command": "tasksessiond", "args": []any{"mcp", "--session", "team-list"}, "env": map[string]any{"TEAM": "1"}})
		}},
	}
	h.SetupCorpus(t, "claude-code", h.Config, cases, func(t *testing.T, setUp bool) {
		out := h.Command(t, 90*time.Second, "mcp", "list")
		require.NoError(t, out.Err, "claude cannot read its config: %s%s", out.Stdout, out.Stderr)
		if setUp {
			assert.Contains(t, out.Stdout, "tasks:")
		}
	})
}
