package paths_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/paths"
)

func TestDefaults(t *testing.T) {
	// Ensures the environment overrides win, then XDG, then the fallbacks.
	t.Setenv(paths.EnvDB, "")
	t.Setenv(paths.EnvSocket, "")
	t.Setenv("HOME", "/home/u")
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	assert.Equal(t, "/home/u/.local/state/tasksessiond/tasksessiond.db", paths.DB())
	assert.Equal(t, filepath.Join(os.TempDir(), fmt.Sprintf("tasksessiond-%d", os.Getuid()), "tasksessiond.sock"), paths.Socket())

	t.Setenv("XDG_STATE_HOME", "/state")
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/7")
	assert.Equal(t, "/state/tasksessiond/tasksessiond.db", paths.DB())
	assert.Equal(t, "/run/user/7/tasksessiond/tasksessiond.sock", paths.Socket())

	t.Setenv(paths.EnvDB, "/x.db")
	t.Setenv(paths.EnvSocket, "/x.sock")
	assert.Equal(t, "/x.db", paths.DB())
	assert.Equal(t, "/x.sock", paths.Socket())
}

func TestPrivateIfExists(t *testing.T) {
	// Ensures a missing directory passes (it is made 0700 when needed), a
	// private one passes, and one open to others is refused.
	dir := t.TempDir()
	assert.NoError(t, paths.PrivateIfExists(filepath.Join(dir, "missing")))
	require.NoError(t, os.Chmod(dir, 0o700))
	assert.NoError(t, paths.PrivateIfExists(dir))
	require.NoError(t, os.Chmod(dir, 0o755))
	assert.ErrorContains(t, paths.PrivateIfExists(dir), "open to other users")
}
