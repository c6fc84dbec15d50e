package gemini_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/gemini"
)

// TestDoctorAgreesOnFolderTrust ensures doctor says what the pinned CLI
// does of an untrusted folder: with folder trust on (Gemini CLI's
// default) and no rule for the project, "gemini mcp list" says its
// servers are disabled and doctor reports the folder, with the fix; once
// the folder is trusted as the fix says, the server connects and doctor
// says "set up".
func TestDoctorAgreesOnFolderTrust(t *testing.T) {
	t.Parallel()
	// the harness's settings but folder trust: on, as Gemini CLI has it
	on := map[string]any{"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}}
	h := gemini.New(t, gemini.Options{Settings: on})

	list := h.Command(t, 60*time.Second, "mcp", "list")
	require.NoError(t, list.Err, "%s%s", list.Stdout, list.Stderr)
	assert.Contains(t, list.Stdout+list.Stderr, "disabled because this folder is untrusted")
	out, err := h.Doctor("gemini")
	assert.Error(t, err, out)
	assert.Contains(t, out, "Gemini CLI: NOT RIGHT")
	assert.Contains(t, out, "Gemini CLI does not trust the folder "+h.Project)
	trusted := filepath.Join(h.Home, ".gemini", "trustedFolders.json")
	assert.Contains(t, out, `add "`+h.Project+`": "TRUST_FOLDER" to `+trusted)

	require.NoError(t, os.WriteFile(trusted, []byte(`{"`+h.Project+`": "TRUST_FOLDER"}`), 0o600))
	list = h.Command(t, 60*time.Second, "mcp", "list")
	require.NoError(t, list.Err, "%s%s", list.Stdout, list.Stderr)
	assert.NotContains(t, list.Stdout+list.Stderr, "untrusted")
	assert.Contains(t, list.Stdout+list.Stderr, "tasks")
	assert.Contains(t, list.Stdout+list.Stderr, "Connected")
	out, err = h.Doctor("gemini")
	assert.NoError(t, err, out)
	assert.Contains(t, out, "Gemini CLI: set up")
}

// TestDoctorAgreesOnTheExtension ensures the extension, installed with the
// pinned CLI, is "set up" by doctor (by the extension), and that setup
// refuses to add its own server beside it, changing nothing: Gemini CLI
// would start both.
func TestDoctorAgreesOnTheExtension(t *testing.T) {
	t.Parallel()
	h := extension(t, gemini.New(t, gemini.Options{NoSetup: true}))
	out, err := h.Host.Doctor("gemini")
	assert.NoError(t, err, out)
	assert.Contains(t, out, "Gemini CLI: set up (by the extension tasksessiond)")
	settings := filepath.Join(h.Home, ".gemini", "settings.json")
	before := read(t, settings)
	out, err = h.RunTSD([]string{"setup", "gemini", "--bin", h.Rec.Bin})
	assert.Error(t, err, out)
	assert.Contains(t, out, "the extension tasksessiond")
	assert.Equal(t, before, read(t, settings), "setup beside the extension changed settings.json")
	list := h.Command(t, 60*time.Second, "mcp", "list")
	assert.Contains(t, list.Stdout+list.Stderr, "tasks (from tasksessiond)", "one server, the extension's")
}

// TestDoctorAgreesOnAnExcludedServer ensures doctor says what the pinned
// CLI does of setup's server named in mcp.excluded: "gemini mcp list"
// shows it blocked, and doctor reports the setting with its fix.
func TestDoctorAgreesOnAnExcludedServer(t *testing.T) {
	t.Parallel()
	h := gemini.New(t, gemini.Options{})
	settings := filepath.Join(h.Project, ".gemini", "settings.json")
	h.Mkdir(filepath.Dir(settings))
	h.WriteFile(settings, `{"mcp": {"excluded": ["tasks"]}}`, 0o600)
	list := h.Command(t, 60*time.Second, "mcp", "list")
	require.NoError(t, list.Err, "%s%s", list.Stdout, list.Stderr)
	assert.Regexp(t, `tasks: .* - Blocked`, list.Stdout+list.Stderr)
	out, err := h.Doctor("gemini")
	assert.Error(t, err, out)
	assert.Contains(t, out, "mcp.excluded in "+settings+" names the server tasks")
	assert.Contains(t, out, `fix: remove "tasks" from mcp.excluded in `+settings)
}

// TestDoctorAgreesOnSettingsItCannotRead ensures doctor says what the
// pinned CLI does of a settings file it cannot parse: a trailing comma in
// the project's settings.json, or a byte order mark before the user's,
// stops Gemini CLI at start ("Please fix the configuration file(s)"), and
// doctor reports the file (it once said "set up" for both).
func TestDoctorAgreesOnSettingsItCannotRead(t *testing.T) {
	t.Parallel()
	h := gemini.New(t, gemini.Options{})
	workspace := filepath.Join(h.Project, ".gemini", "settings.json")
	user := filepath.Join(h.Home, ".gemini", "settings.json")
	set := read(t, user)
	for _, c := range []struct {
		path, text string
	}{
		{workspace, "{\"model\": {\"name\": \"gemini-2.5-flash\"},}\n"},
		{user, "\ufeff" + set},
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(c.path), 0o755))
		require.NoError(t, os.WriteFile(c.path, []byte(c.text), 0o600))
		list := h.Command(t, 60*time.Second, "mcp", "list")
		assert.Contains(t, list.Stdout+list.Stderr, "Please fix the configuration file", c.path)
		assert.NotContains(t, list.Stdout+list.Stderr, "Connected", c.path)
		out, err := h.Doctor("gemini")
		assert.Error(t, err, out)
		assert.Contains(t, out, "Gemini CLI cannot read "+c.path+": ")
		assert.Contains(t, out, "fix: repair "+c.path)
		if c.path == workspace {
			require.NoError(t, os.Remove(workspace))
		}
	}
	require.NoError(t, os.WriteFile(user, []byte(set), 0o600))
	out, err := h.Doctor("gemini")
	assert.NoError(t, err, out)
}
