package claudecode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// TestDoctorAgreesOnWhatTurnsItOff ensures what doctor reports of a setup
// beside "disableAllHooks": true and a deny rule for the server is what the
// pinned CLI does: it runs no hook and offers the model none of the tools;
// doctor names both settings, each with its fix.
func TestDoctorAgreesOnWhatTurnsItOff(t *testing.T) {
	t.Parallel()
	script := modelapi.NewScript(modelapi.Text("Hello."))
	off := map[string]any{"disableAllHooks": true, "permissions": map[string]any{"deny": []string{"mcp__tasks"}}}
	h := claudecode.New(t, claudecode.Options{Respond: script.Respond, Settings: off})
	h.Print(t, "Hello.", "--session-id", uuid.NewString())
	require.True(t, script.Done(), h.API.Dump())
	main := h.API.Main()
	require.NotEmpty(t, main, h.API.Dump())
	assert.Empty(t, h.Hooks(), "the SessionStart hook ran under disableAllHooks")
	assert.False(t, strings.Contains(main[0].AllText(), "mcp__tasks__TaskCreate"), "the deny rule left the tools in the offer")
	assert.False(t, main[0].HasTool(taskCreate))

	out, err := h.Doctor("claude-code")
	assert.Error(t, err, out)
	assert.Contains(t, out, `"disableAllHooks": true in `)
	assert.Contains(t, out, `the deny rule "mcp__tasks" in `)
	assert.Contains(t, out, `fix: remove "mcp__tasks" from permissions.deny in `)
}

// TestDoctorAgreesOnAServerDisabledForTheRepository ensures doctor looks
// the server disabled in /mcp up where the pinned CLI keeps it: under the
// git root, whatever subfolder Claude Code runs in. Doctor once said "set
// up" in a subfolder while "claude mcp list" said the server was disabled.
func TestDoctorAgreesOnAServerDisabledForTheRepository(t *testing.T) {
	t.Parallel()
	h := claudecode.New(t, claudecode.Options{Respond: modelapi.NewScript().Respond})
	root := h.Project
	sub := filepath.Join(root, "sub", "deeper")
	h.Mkdir(filepath.Join(root, ".git"), sub)
	state := filepath.Join(h.Config, ".claude.json")
	var v map[string]any
	b, err := os.ReadFile(state)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &v))
	v["projects"].(map[string]any)[root].(map[string]any)["disabledMcpServers"] = []string{"tasks"}
	h.WriteJSON(state, v)

	h.Project = sub
	out := h.Command(t, 60*time.Second, "mcp", "list")
	require.NoError(t, out.Err, out.Stderr)
	require.Contains(t, out.Stdout, "Disabled for this project", "claude mcp list in %s", sub)
	tsd, err := h.Doctor("claude-code")
	assert.Error(t, err, tsd)
	assert.Contains(t, tsd, "the MCP server tasks is disabled for "+root+" ")
}

// TestDoctorAgreesOnTheProjectFilesOfASubfolder ensures doctor, run in a
// subfolder of a repository, reads the settings the pinned CLI reads
// there: a deny rule for the server in the git root's
// .claude/settings.local.json takes the tools from the model and doctor
// names it; the same rule in the root's .claude/settings.json is not read
// in the subfolder (the tools are offered) and doctor says "set up".
// Doctor once read only the subfolder's own files.
func TestDoctorAgreesOnTheProjectFilesOfASubfolder(t *testing.T) {
	t.Parallel()
	script := modelapi.NewScript(modelapi.Text("Hello."), modelapi.Text("Hello."))
	h := claudecode.New(t, claudecode.Options{Respond: script.Respond})
	root := h.Project
	sub := filepath.Join(root, "sub")
	h.Mkdir(filepath.Join(root, ".git"), filepath.Join(root, ".claude"), sub)
	deny := map[string]any{"permissions": map[string]any{"deny": []string{"mcp__tasks"}}}
	h.Project = sub

	h.WriteJSON(filepath.Join(root, ".claude", "settings.json"), deny)
	h.Print(t, "Hello.", "--session-id", uuid.NewString())
	main := h.API.Main()
	require.NotEmpty(t, main, h.API.Dump())
	offered := func(r *modelapi.Request) bool { return strings.Contains(r.AllText(), "mcp__tasks__TaskCreate") } // deferred, named in the text
	assert.True(t, offered(main[len(main)-1]), "the root's settings.json denied the tools in the subfolder")
	out, err := h.Doctor("claude-code")
	assert.NoError(t, err, out)
	assert.Contains(t, out, "Claude Code: set up")

	local := filepath.Join(root, ".claude", "settings.local.json")
	require.NoError(t, os.Remove(filepath.Join(root, ".claude", "settings.json")))
	h.WriteJSON(local, deny)
	h.Print(t, "Hello.", "--session-id", uuid.NewString())
	main = h.API.Main()
	assert.False(t, offered(main[len(main)-1]), "the root's settings.local.json left the tools in the subfolder")
	out, err = h.Doctor("claude-code")
	assert.Error(t, err, out)
	assert.Contains(t, out, `the deny rule "mcp__tasks" in `+local)
}

// TestDoctorAgreesOnTheLocalSettingsOfARootItDoesNotOwn ensures doctor,
// run in a subfolder of a repository whose .git another user owns, does
// not read the git root's .claude/settings.local.json, as the pinned CLI
// does not (it reads it only when the user owns the root, its .git and
// its .claude): a deny rule there leaves the tools offered, and doctor
// says "set up". Doctor once named the rule. Only root can give .git to
// another user.
func TestDoctorAgreesOnTheLocalSettingsOfARootItDoesNotOwn(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("giving .git to another user takes root")
	}
	script := modelapi.NewScript(modelapi.Text("Hello."))
	h := claudecode.New(t, claudecode.Options{Respond: script.Respond})
	root := h.Project
	sub := filepath.Join(root, "sub")
	h.Mkdir(filepath.Join(root, ".git"), filepath.Join(root, ".claude"), sub)
	h.WriteJSON(filepath.Join(root, ".claude", "settings.local.json"), map[string]any{"permissions": map[string]any{"deny": []string{"mcp__tasks"}}})
	require.NoError(t, os.Lchown(filepath.Join(root, ".git"), 4242, 4242))
	h.Project = sub

	h.Print(t, "Hello.", "--session-id", uuid.NewString())
	main := h.API.Main()
	require.NotEmpty(t, main, h.API.Dump())
	assert.True(t, strings.Contains(main[len(main)-1].AllText(), "mcp__tasks__TaskCreate"), "the settings.local.json of a root another user owns denied the tools")
	out, err := h.Doctor("claude-code")
	assert.NoError(t, err, out)
	assert.Contains(t, out, "Claude Code: set up")
}
