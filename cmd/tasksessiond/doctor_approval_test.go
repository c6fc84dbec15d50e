package main_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/host"
)

func TestDoctorQwenMCPJSONApprovalIsBoundToItsHash(t *testing.T) {
	// Ensures doctor says a project's .mcp.json server "tasks", approved
	// for the folder, is set up only while its settings hash to what the
	// approval was bound to, as Qwen Code 0.24.4 holds it ("qwen mcp
	// approve tasks" wrote the hash below for this server; edited, "qwen
	// mcp list" says "Pending approval"). Doctor once said "set up" of an
	// approved .mcp.json server whatever was edited since.
	e := newSetupEnv(t)
	project := host.RealPath(t.TempDir())
	out, code := e.runIn(t, project, nil, "setup", "--bin", e.bin, "qwen")
	require.Equal(t, 0, code, out)
	mcpJSON := filepath.Join(project, ".mcp.json")
	require.NoError(t, os.WriteFile(mcpJSON, []byte(`{"mcpServers": {"tasks": {"type": "stdio", "command": "tasksessiond", "args": ["mcp"]}}}`), 0o600))
	approvals := `{"` + project + `": {"tasks": {"hash": "a96df84a9e5902a382db3b41e0fbf14b44d27c46acb59f07cb4520c21ee521e5", "status": "approved"}}}`
	require.NoError(t, os.WriteFile(filepath.Join(e.home, ".qwen", "mcpApprovals.json"), []byte(approvals), 0o600))
	out, code = e.runIn(t, project, nil, "doctor", "--bin", e.bin, "qwen")
	assert.Equal(t, 0, code, "approved as it is:\n%s", out)

	require.NoError(t, os.WriteFile(mcpJSON, []byte(`{"mcpServers": {"tasks": {"type": "stdio", "command": "tasksessiond", "args": ["mcp"], "env": {"X": "1"}}}}`), 0o600))
	out, code = e.runIn(t, project, nil, "doctor", "--bin", e.bin, "qwen")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "the MCP server tasks in "+mcpJSON+" is changed since it was approved")
	assert.Contains(t, out, "fix: qwen mcp approve tasks (in "+project+")")
}

func TestDoctorQwenHomeFromDotEnv(t *testing.T) {
	// Ensures setup and doctor take QWEN_HOME from ~/.env when the
	// environment has none, as Qwen Code 0.24.4 does: setup writes the
	// settings there, not in ~/.qwen, and doctor reads them there.
	e := newSetupEnv(t)
	project := t.TempDir()
	dir := filepath.Join(t.TempDir(), "qwen-home")
	require.NoError(t, os.WriteFile(filepath.Join(e.home, ".env"), []byte("QWEN_HOME="+dir+"\n"), 0o600))
	out, code := e.runIn(t, project, nil, "setup", "--bin", e.bin, "qwen")
	require.Equal(t, 0, code, out)
	assert.FileExists(t, filepath.Join(dir, "settings.json"))
	assert.NoFileExists(t, filepath.Join(e.home, ".qwen", "settings.json"))
	out, code = e.runIn(t, project, nil, "doctor", "--bin", e.bin, "qwen")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "Qwen Code: set up")
}
