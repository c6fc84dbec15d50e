package opencode_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/opencode"
)

// TestDoctorAgreesOnToolsTurnedOff ensures doctor says what the pinned CLI
// does of the plugin's tools under "tools" and "permission" rules with
// wildcards, and under a project's opencode.json: "opencode debug agent
// build" shows each tool off or on, and doctor reports exactly the ones
// off (it once said "set up" for all of these).
func TestDoctorAgreesOnToolsTurnedOff(t *testing.T) {
	t.Parallel()
	h := opencode.New(t, opencode.Options{
		Respond: modelapi.NewScript().Respond,
		Config: map[string]any{
			"tools":      map[string]any{"Task*": false, "TaskList": true},
			"permission": map[string]any{"TaskUpdate": "deny", "TaskList": map[string]any{"*": "deny", "x": "allow"}},
		},
	})
	require.NoError(t, os.WriteFile(filepath.Join(h.Project, "opencode.json"), []byte(`{"tools": {"TaskGet": true}}`), 0o644))
	out := h.Command(t, 90*time.Second, "debug", "agent", "build")
	require.NoError(t, out.Err, out.Stderr)
	for tool, on := range map[string]bool{"TaskCreate": false, "TaskList": true, "TaskGet": true, "TaskUpdate": false} {
		want := `"` + tool + `": false`
		if on {
			want = `"` + tool + `": true`
		}
		require.Contains(t, out.Stdout, want, "opencode debug agent build")
	}
	tsd, err := h.Doctor("opencode")
	assert.Error(t, err, tsd)
	cfg := filepath.Join(h.Config, "opencode.json")
	assert.Contains(t, tsd, `"tools": {"Task*": false} in `+cfg+`: OpenCode does not offer the plugin's TaskCreate`)
	assert.Contains(t, tsd, `"permission": {"TaskUpdate": "deny"} in `+cfg+`: OpenCode does not offer the plugin's TaskUpdate`)
	assert.NotContains(t, tsd, "plugin's TaskList")
	assert.NotContains(t, tsd, "plugin's TaskGet")
	assert.Equal(t, 2, strings.Count(tsd, "OpenCode does not offer"), tsd)
}
