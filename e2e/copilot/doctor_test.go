package copilot_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/copilot"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestDoctorAgreesOnWhatTurnsTheServerOff ensures doctor says what the
// pinned CLI does of setup's server: disabled with "copilot mcp disable"
// ("copilot mcp list": disabled), doctor names the setting and "copilot
// mcp enable tasks"; with Task tools left out of its "tools" ("copilot
// mcp get" lists the rest), doctor names them; set up again once each is
// undone.
func TestDoctorAgreesOnWhatTurnsTheServerOff(t *testing.T) {
	t.Parallel()
	h := copilot.New(t, copilot.Options{Respond: modelapi.NewScript().Respond})
	out, err := h.Doctor("copilot")
	require.NoError(t, err, out)
	assert.Contains(t, out, "GitHub Copilot CLI: set up")

	cli := h.Command(t, 60*time.Second, "mcp", "disable", "tasks")
	require.NoError(t, cli.Err, "%s%s", cli.Stdout, cli.Stderr)
	cli = h.Command(t, 60*time.Second, "mcp", "list")
	assert.Contains(t, cli.Stdout, "tasks (local, disabled)")
	out, err = h.Doctor("copilot")
	assert.Error(t, err, out)
	assert.Contains(t, out, `the MCP server tasks is disabled ("disabledMcpServers" in `+filepath.Join(h.CopilotHome, "settings.json")+")")
	assert.Contains(t, out, "fix: copilot mcp enable tasks")
	cli = h.Command(t, 60*time.Second, "mcp", "enable", "tasks")
	require.NoError(t, cli.Err, "%s%s", cli.Stdout, cli.Stderr)
	out, err = h.Doctor("copilot")
	assert.NoError(t, err, out)

	path := filepath.Join(h.CopilotHome, "mcp-config.json")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var cfg map[string]map[string]map[string]any
	require.NoError(t, json.Unmarshal(b, &cfg))
	cfg["mcpServers"]["tasks"]["tools"] = []string{"TaskList", "TaskGet"}
	h.WriteJSON(path, cfg)
	cli = h.Command(t, 60*time.Second, "mcp", "get", "tasks")
	assert.Regexp(t, `Tools: TaskList, TaskGet\s`, cli.Stdout)
	out, err = h.Doctor("copilot")
	assert.Error(t, err, out)
	assert.Contains(t, out, `"tools" of the MCP server tasks in `+path+" leaves out TaskCreate, TaskUpdate")
}

// TestDoctorAgreesOnAWorkspaceServer ensures doctor says what the pinned
// CLI does of a workspace's .mcp.json with a server "tasks" of its own:
// in a folder it trusts, "copilot mcp get tasks" shows the workspace's,
// and doctor names the file; untrusted, the user's, and doctor says "set
// up".
func TestDoctorAgreesOnAWorkspaceServer(t *testing.T) {
	t.Parallel()
	h := copilot.New(t, copilot.Options{Respond: modelapi.NewScript().Respond})
	mcp := filepath.Join(h.Project, ".mcp.json")
	h.WriteJSON(mcp, map[string]any{"mcpServers": map[string]any{"tasks": map[string]any{"command": "echo", "args": []string{"other"}}}})
	cli := h.Command(t, 60*time.Second, "mcp", "get", "tasks")
	assert.Contains(t, cli.Stdout, "Source: User")
	out, err := h.Doctor("copilot")
	assert.NoError(t, err, out)

	h.WriteJSON(filepath.Join(h.CopilotHome, "config.json"), map[string]any{"trusted_folders": []string{h.Project}})
	cli = h.Command(t, 60*time.Second, "mcp", "get", "tasks")
	assert.Contains(t, cli.Stdout, "Command: echo other")
	out, err = h.Doctor("copilot")
	assert.Error(t, err, out)
	assert.Contains(t, out, "the MCP server tasks in "+mcp+", which does not run tasksessiond mcp, overrides setup's")
}

// TestDoctorAgreesOnAnUntrustedProject ensures doctor says what the
// pinned CLI does of "setup copilot --project" in a folder it does not
// trust: "copilot mcp get tasks" finds no server there, and doctor names
// the folder; trusted, the CLI shows the project's server and doctor
// says "set up".
func TestDoctorAgreesOnAnUntrustedProject(t *testing.T) {
	t.Parallel()
	h := copilot.New(t, copilot.Options{Respond: modelapi.NewScript().Respond, NoSetup: true})
	h.Setup(t, "copilot", "--project")
	doctor := func() (string, error) {
		return h.RunTSD([]string{"doctor", "copilot", "--project", "--socket", h.Daemon.Socket, "--db", h.Daemon.DB, "--bin", h.Rec.Bin})
	}
	cli := h.Command(t, 60*time.Second, "mcp", "get", "tasks")
	assert.NotContains(t, cli.Stdout+cli.Stderr, "Source: Workspace")
	out, err := doctor()
	assert.Error(t, err, out)
	assert.Contains(t, out, "only in a folder it trusts")

	h.WriteJSON(filepath.Join(h.CopilotHome, "config.json"), map[string]any{"trusted_folders": []string{h.Project}})
	cli = h.Command(t, 60*time.Second, "mcp", "get", "tasks")
	assert.Contains(t, cli.Stdout, "Source: Workspace")
	out, err = doctor()
	assert.NoError(t, err, out)
}
