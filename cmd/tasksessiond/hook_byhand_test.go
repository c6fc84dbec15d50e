package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// byHand is Claude Code's settings.json as a user keeps it who wrote the
// SessionStart hook by hand, as docs/HOSTS.md says, running command.
func byHand(command string) string {
	return "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"SessionStart\": [\n      { \"hooks\": [{ \"type\": \"command\", \"command\": \"" + command + "\" }] }\n    ]\n  }\n}\n"
}

func TestSetupLeavesAHookWrittenByHand(t *testing.T) {
	// Ensures a SessionStart group the user wrote by hand that runs the
	// hook as setup's would is theirs: setup changes nothing of it, doctor
	// says set up, and uninstall gives back their bytes, where setup said
	// "set up already" and uninstall took the group out.
	t.Parallel()
	e := newSetupEnv(t)
	rel := ".claude/settings.json"
	// with --bin, setup's hook runs that path; with none, "tasksessiond"
	e.write(t, map[string]string{rel: byHand(e.bin + " hook claude-code")})
	orig := e.snapshot(t)

	out, code := setupHost(t, e, "claude-code")
	require.Equal(t, 0, code, out)
	assert.NotContains(t, out, "SessionStart hook")
	settings := e.snapshot(t)[rel]
	assert.Contains(t, settings, `{ "hooks": [{ "type": "command", "command": "`+e.bin+` hook claude-code" }] }`, "the user's group was changed")
	assert.Equal(t, 1, strings.Count(settings, "hook claude-code"), "%s", settings)

	stdout, stderr, code := e.run(t, "doctor", "--bin", e.bin, "claude-code")
	assert.Equal(t, 0, code, "doctor after setup:\n%s%s", stdout, stderr)

	out, code = setupHost(t, e, "claude-code", "--uninstall")
	require.Equal(t, 0, code, out)
	b, err := os.ReadFile(filepath.Join(e.home, rel))
	require.NoError(t, err)
	assert.Equal(t, orig[rel], string(b), "uninstall did not give back the user's bytes")
	assert.Equal(t, orig, e.snapshot(t))
}

func TestSetupRefusesAHookWrittenByHandRunOtherwise(t *testing.T) {
	// Ensures a group written by hand that runs the hook otherwise than
	// setup's would (bound to a session of the user's) is refused by name,
	// every file untouched, where setup took it for a stale one of its own.
	t.Parallel()
	e := newSetupEnv(t)
	rel := ".claude/settings.json"
	e.write(t, map[string]string{rel: byHand(e.bin + " hook claude-code --session mine")})
	orig := e.snapshot(t)

	out, code := setupHost(t, e, "claude-code")
	assert.NotZero(t, code)
	assert.Contains(t, out, "hooks.SessionStart[0]")
	assert.Contains(t, out, "--no-hook")
	assert.Equal(t, orig, e.snapshot(t))
	assert.NoFileExists(t, e.record())
}
