package codex_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/codex"
)

// TestDoctorAgreesOnADisabledServer ensures doctor says what the pinned
// CLI does of setup's server turned off (enabled = false under its table):
// "codex mcp list" lists it disabled, and doctor reports it with the fix;
// with the line gone, both have it on and doctor says "set up".
func TestDoctorAgreesOnADisabledServer(t *testing.T) {
	t.Parallel()
	h := codex.New(t, codex.Options{})
	cfg := filepath.Join(h.CodexHome, "config.toml")
	enabled := func() bool {
		t.Helper()
		out := h.Command(t, 60*time.Second, "mcp", "list", "--json")
		require.NoError(t, out.Err, out.Stderr)
		var servers []struct {
			Name    string `json:"name"`
			Enabled bool   `json:"enabled"`
		}
		require.NoError(t, json.Unmarshal([]byte(out.Stdout), &servers), out.Stdout)
		for _, s := range servers {
			if s.Name == "tasks" {
				return s.Enabled
			}
		}
		t.Fatalf("codex mcp list has no server tasks:\n%s", out.Stdout)
		return false
	}
	out, err := h.Doctor("codex")
	require.NoError(t, err, out)
	require.True(t, enabled())

	set := read(t, cfg)
	off := strings.Replace(set, "startup_timeout_sec = 30\n", "startup_timeout_sec = 30\nenabled = false\n", 1)
	require.NotEqual(t, set, off, "setup's server table:\n%s", set)
	require.NoError(t, os.WriteFile(cfg, []byte(off), 0o600))
	assert.False(t, enabled(), "codex mcp list: the server is on")
	out, err = h.Doctor("codex")
	assert.Error(t, err, out)
	assert.Contains(t, out, "the MCP server tasks is disabled (enabled = false under [mcp_servers.tasks] in "+cfg+")")

	require.NoError(t, os.WriteFile(cfg, []byte(set), 0o600))
	assert.True(t, enabled())
	out, err = h.Doctor("codex")
	assert.NoError(t, err, out)
	assert.Contains(t, out, "Codex CLI: set up")
}

// TestDoctorAgreesOnATrustedProjectsLayer ensures doctor reads a trusted
// project's .codex/config.toml as the pinned CLI does, from a subfolder
// too: "codex mcp list" lists setup's server disabled by the project's
// enabled = false, and doctor reports it with the fix (it once said "set
// up" unless given --project).
func TestDoctorAgreesOnATrustedProjectsLayer(t *testing.T) {
	t.Parallel()
	h := codex.New(t, codex.Options{})
	root := h.Project
	sub := filepath.Join(root, "sub")
	h.Mkdir(filepath.Join(root, ".git"), filepath.Join(root, ".codex"), sub)
	// what the pinned CLI takes for a repository (an empty .git is none)
	h.WriteFile(filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	layer := filepath.Join(root, ".codex", "config.toml")
	h.WriteFile(layer, "[mcp_servers.tasks]\nenabled = false\n", 0o644)
	h.Project = sub
	out := h.Command(t, 60*time.Second, "mcp", "list", "--json")
	require.NoError(t, out.Err, out.Stderr)
	var servers []struct {
		Name    string `json:"name"`
		Enabled bool   `json:"enabled"`
	}
	require.NoError(t, json.Unmarshal([]byte(out.Stdout), &servers), out.Stdout)
	require.Contains(t, servers, struct {
		Name    string `json:"name"`
		Enabled bool   `json:"enabled"`
	}{"tasks", false}, out.Stdout)
	tsd, err := h.Doctor("codex")
	assert.Error(t, err, tsd)
	assert.Contains(t, tsd, "the MCP server tasks is disabled (enabled = false under [mcp_servers.tasks] in "+layer+")")
}
