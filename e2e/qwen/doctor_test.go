package qwen_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/qwen"
)

// TestDoctorAgreesOnWhatTurnsTheServerOff ensures doctor says what the
// pinned CLI does of setup's server: "qwen mcp reconnect --all" skips it,
// saying why, where doctor names the setting with its fix (excluded by a
// wildcard, left out of mcp.allowed, the folder distrusted with folder
// trust on); with none, the server connects and doctor says "set up".
func TestDoctorAgreesOnWhatTurnsTheServerOff(t *testing.T) {
	t.Parallel()
	type obj = map[string]any
	for _, c := range []struct {
		name     string
		settings obj
		trust    string // the project's rule in trustedFolders.json
		cli      string // what "qwen mcp reconnect --all" says of tasks
		doctor   string // what doctor says, {settings} the user's file
	}{
		{"None", nil, "", "tasks: Reconnected successfully", "Qwen Code: set up"},
		{"Excluded", obj{"mcp": obj{"excluded": []string{"ta*"}}}, "",
			"tasks: Skipped - server is excluded in settings (mcp.excluded)", "mcp.excluded in {settings} names the server tasks"},
		{"NotAllowed", obj{"mcp": obj{"allowed": []string{"other"}}}, "",
			"tasks: Skipped - server is not in the mcp.allowed list", "mcp.allowed in {settings} leaves out the server tasks"},
		{"Distrusted", obj{"security": obj{"auth": obj{"selectedType": "openai"}, "folderTrust": obj{"enabled": true}}}, "DO_NOT_TRUST",
			"tasks: Skipped - workspace folder is not trusted", "Qwen Code does not trust the folder {project} (DO_NOT_TRUST in "},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := qwen.New(t, qwen.Options{Respond: modelapi.NewScript().Respond, Settings: c.settings})
			if c.trust != "" {
				h.WriteJSON(filepath.Join(h.Home, ".qwen", "trustedFolders.json"), map[string]string{h.Project: c.trust})
			}
			out := h.Command(t, 60*time.Second, "mcp", "reconnect", "--all")
			require.NoError(t, out.Err, "%s%s", out.Stdout, out.Stderr)
			assert.Contains(t, out.Stdout, c.cli)
			tsd, err := h.Doctor("qwen")
			assert.Equal(t, c.name == "None", err == nil, tsd)
			settings := filepath.Join(h.Home, ".qwen", "settings.json")
			assert.Contains(t, tsd, strings.NewReplacer("{settings}", settings, "{project}", h.Project).Replace(c.doctor))
		})
	}
}

// TestDoctorAgreesOnHooksTurnedOff ensures doctor says what the pinned CLI
// does of "disableAllHooks": true in settings.json: a session runs no
// hook, and doctor names the setting with its fix.
func TestDoctorAgreesOnHooksTurnedOff(t *testing.T) {
	t.Parallel()
	h := qwen.New(t, qwen.Options{Respond: modelapi.NewScript(modelapi.Text("Hello.")).Respond, Settings: map[string]any{"disableAllHooks": true}})
	h.Run(t, "Hello.")
	assert.Empty(t, h.Hooks("SessionStart"), "a hook ran under disableAllHooks")
	tsd, err := h.Doctor("qwen")
	assert.Error(t, err, tsd)
	assert.Contains(t, tsd, `"disableAllHooks": true in `+filepath.Join(h.Home, ".qwen", "settings.json")+": Qwen Code runs no hook")
}

// TestDoctorAgreesOnProjectServerApproval ensures doctor says what the
// pinned CLI does of setup --project's server: "qwen mcp reconnect
// --all" skips it, pending approval, and doctor says so with "qwen mcp
// approve tasks"; once approved, it connects and doctor says "set up".
func TestDoctorAgreesOnProjectServerApproval(t *testing.T) {
	t.Parallel()
	h := qwen.New(t, qwen.Options{Respond: modelapi.NewScript().Respond, NoSetup: true})
	h.Setup(t, "qwen", "--project")
	out := h.Command(t, 60*time.Second, "mcp", "reconnect", "--all")
	assert.Contains(t, out.Stdout, "tasks: Skipped - server is pending approval")
	doctor := func() (string, error) { // as h.Doctor, with --project
		args := []string{"doctor", "qwen", "--project", "--socket", h.Daemon.Socket, "--db", h.Daemon.DB}
		if h.Rec != nil {
			args = append(args, "--bin", h.Rec.Bin)
		}
		return h.RunTSD(args)
	}
	tsd, err := doctor()
	assert.Error(t, err, tsd)
	assert.Contains(t, tsd, "is not approved for the folder")
	assert.Contains(t, tsd, "qwen mcp approve tasks")

	out = h.Command(t, 60*time.Second, "mcp", "approve", "tasks")
	require.NoError(t, out.Err, "%s%s", out.Stdout, out.Stderr)
	out = h.Command(t, 60*time.Second, "mcp", "reconnect", "--all")
	assert.Contains(t, out.Stdout, "tasks: Reconnected successfully")
	tsd, err = doctor()
	assert.NoError(t, err, tsd)
}

// TestDoctorAgreesOnAnEditedMCPJSONServer ensures doctor holds a project's
// .mcp.json server "tasks" (which overrides setup's) to the approval the
// pinned CLI holds it to: pending until "qwen mcp approve tasks"; then
// connected, doctor "set up" (the approval's hash is of the server in Qwen
// Code's form, "type" left out); edited since, pending again, and doctor
// says it changed, with "qwen mcp approve tasks". Doctor once said "set
// up" of an approved server whatever was edited since.
func TestDoctorAgreesOnAnEditedMCPJSONServer(t *testing.T) {
	t.Parallel()
	h := qwen.New(t, qwen.Options{Respond: modelapi.NewScript().Respond})
	bin := h.TSD
	if h.Rec != nil {
		bin = h.Rec.Bin
	}
	server := map[string]any{"type": "stdio", "command": bin, "args": []string{"mcp", "--socket", h.Daemon.Socket, "--db", h.Daemon.DB}}
	mcpJSON := filepath.Join(h.Project, ".mcp.json")
	h.WriteJSON(mcpJSON, map[string]any{"mcpServers": map[string]any{"tasks": server}})
	reconnect := func() string {
		out := h.Command(t, 60*time.Second, "mcp", "reconnect", "--all")
		return out.Stdout
	}
	assert.Contains(t, reconnect(), "tasks: Skipped - server is pending approval")
	tsd, err := h.Doctor("qwen")
	assert.Error(t, err, tsd)
	assert.Contains(t, tsd, "the MCP server tasks in "+mcpJSON+" is not approved for the folder")

	out := h.Command(t, 60*time.Second, "mcp", "approve", "tasks")
	require.NoError(t, out.Err, "%s%s", out.Stdout, out.Stderr)
	assert.Contains(t, reconnect(), "tasks: Reconnected successfully")
	tsd, err = h.Doctor("qwen")
	assert.NoError(t, err, tsd)
	assert.Contains(t, tsd, "Qwen Code: set up")

	server["env"] = map[string]string{"TASKSESSIOND_E2E_EDITED": "1"}
	h.WriteJSON(mcpJSON, map[string]any{"mcpServers": map[string]any{"tasks": server}})
	assert.Contains(t, reconnect(), "tasks: Skipped - server is pending approval")
	tsd, err = h.Doctor("qwen")
	assert.Error(t, err, tsd)
	assert.Contains(t, tsd, "the MCP server tasks in "+mcpJSON+" is changed since it was approved")
	assert.Contains(t, tsd, "qwen mcp approve tasks (in "+h.Project+")")
}

// TestDoctorAgreesOnQWEN_HOMEFromDotEnv ensures setup and doctor find
// Qwen Code's directory where the pinned CLI does when the environment
// has no QWEN_HOME and ~/.env names one: setup writes the server there,
// "qwen mcp reconnect --all" connects it, and doctor says "set up". Setup
// once wrote ~/.qwen, which Qwen Code then did not read, and doctor read
// the same and said "set up".
func TestDoctorAgreesOnQWEN_HOMEFromDotEnv(t *testing.T) {
	t.Parallel()
	h := qwen.New(t, qwen.Options{Respond: modelapi.NewScript().Respond, NoSetup: true})
	dir := filepath.Join(h.Root, "qwen-home")
	h.Mkdir(dir)
	h.WriteJSON(filepath.Join(dir, "settings.json"), qwen.UserSettings(nil))
	h.WriteFile(filepath.Join(h.Home, ".env"), "QWEN_HOME="+dir+"\n", 0o600)
	h.Setup(t, "qwen")
	out := h.Command(t, 60*time.Second, "mcp", "reconnect", "--all")
	assert.Contains(t, out.Stdout, "tasks: Reconnected successfully")
	tsd, err := h.Doctor("qwen")
	assert.NoError(t, err, tsd)
	assert.Contains(t, tsd, "Qwen Code: set up")
}
