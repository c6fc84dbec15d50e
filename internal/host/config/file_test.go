package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

func TestApply(t *testing.T) {
	// Ensures a change is written whole with the original kept as a
	// backup; a result the host would not read, or a file changed since it
	// was read, leaves the original as it was and no temporary file behind.
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	require.NoError(t, os.WriteFile(path, []byte("{}\n"), 0o640))
	check := func(b []byte) error {
		_, err := config.ParseJSON(b, config.JSON)
		return err
	}

	err := config.Apply(config.Change{Path: path, Old: []byte("{}\n"), New: []byte("{,}\n"), Check: check})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nothing was changed")
	assertFile(t, path, "{}\n")

	err = config.Apply(config.Change{Path: path, Old: []byte("{\"a\": 1}\n"), New: []byte("{}\n"), Check: check})
	require.Error(t, err, "the file is not what was read")
	assertFile(t, path, "{}\n")

	host := func(b []byte) error { // a host writes the file while setup checks its own
		require.NoError(t, os.WriteFile(path, []byte("{\"host\": 1}\n"), 0o640))
		return nil
	}
	err = config.Apply(config.Change{Path: path, Old: []byte("{}\n"), New: []byte("{\"a\": 1}\n"), Check: host})
	require.Error(t, err, "a write of the host's while setup ran was lost")
	assert.Contains(t, err.Error(), "changed while setup ran")
	assertFile(t, path, "{\"host\": 1}\n")
	require.NoError(t, os.WriteFile(path, []byte("{}\n"), 0o640))

	require.NoError(t, config.Apply(config.Change{Path: path, Old: []byte("{}\n"), New: []byte("{\"a\": 1}\n"), Check: check}))
	assertFile(t, path, "{\"a\": 1}\n")
	assertFile(t, path+config.BackupSuffix, "{}\n")
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), st.Mode().Perm(), "the file keeps its mode")

	require.NoError(t, config.Apply(config.Change{Path: path, Old: []byte("{\"a\": 1}\n"), New: nil}))
	_, err = os.Stat(path)
	assert.True(t, errors.Is(err, os.ErrNotExist))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.Contains(e.Name(), ".tasksessiond-") && !strings.HasSuffix(e.Name(), config.BackupSuffix), "a temporary file was left: %s", e.Name())
	}
}

func TestApplyThroughALink(t *testing.T) {
	// Ensures a file that is a link (dotfiles kept elsewhere) is written
	// where it points, the link kept.
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o755))
	require.NoError(t, os.WriteFile(target, []byte("{}\n"), 0o644))
	link := filepath.Join(dir, "settings.json")
	require.NoError(t, os.Symlink(target, link))
	require.NoError(t, config.Apply(config.Change{Path: link, Old: []byte("{}\n"), New: []byte("{\"a\": 1}\n")}))
	st, err := os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, st.Mode()&os.ModeSymlink, "the link was replaced by a file")
	assertFile(t, target, "{\"a\": 1}\n")
}

func TestApplyBackups(t *testing.T) {
	// Ensures a backup is kept of a file before a change, and goes when a
	// later change makes it needless: the file back as it holds, or
	// removed; a file setup makes has none.
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	backup := path + config.BackupSuffix
	require.NoError(t, os.WriteFile(path, []byte("{}\n"), 0o600))
	require.NoError(t, config.Apply(config.Change{Path: path, Old: []byte("{}\n"), New: []byte("{\"a\": 1}\n")}))
	assertFile(t, backup, "{}\n")
	require.NoError(t, config.Apply(config.Change{Path: path, Old: []byte("{\"a\": 1}\n"), New: []byte("{}\n")}))
	assert.NoFileExists(t, backup, "the file is back as the backup holds it")
	assertFile(t, path, "{}\n")

	made := filepath.Join(dir, "made.json")
	require.NoError(t, config.Apply(config.Change{Path: made, New: []byte("{\"a\": 1}\n")}))
	require.NoError(t, config.Apply(config.Change{Path: made, Old: []byte("{\"a\": 1}\n"), New: []byte("{\"a\": 2}\n")}))
	require.NoError(t, config.Apply(config.Change{Path: made, Old: []byte("{\"a\": 2}\n")}))
	assert.NoFileExists(t, made)
	assert.NoFileExists(t, made+config.BackupSuffix, "a backup of a file removed")
}

func TestDiff(t *testing.T) {
	// Ensures --dry-run's diff shows what changes, with its context, as a
	// unified diff (a one-line range written as GNU diff writes it, "+1").
	var b strings.Builder
	config.Diff(&b, config.Change{Path: "/h/s.json", Old: []byte("{\n  \"a\": 1\n}\n"), New: []byte("{\n  \"a\": 1,\n  \"b\": 2\n}\n")})
	assert.Equal(t, "--- a/h/s.json\n+++ b/h/s.json\n@@ -1,3 +1,4 @@\n {\n-  \"a\": 1\n+  \"a\": 1,\n+  \"b\": 2\n }\n", b.String())
	b.Reset()
	config.Diff(&b, config.Change{Path: "/h/n.json", New: []byte("{}")})
	assert.Equal(t, "--- /dev/null\n+++ b/h/n.json\n@@ -0,0 +1 @@\n+{}\n\\ No newline at end of file\n", b.String())
	b.Reset()
	config.Diff(&b, config.Change{Path: "/h/s.json", Old: []byte("x\n"), New: []byte("x\n")})
	assert.Empty(t, b.String())
}

func assertFile(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want, string(b))
}
