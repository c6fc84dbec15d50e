package binding_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/binding"
)

func TestBinding(t *testing.T) {
	// Ensures a binding written for a host process is read back for the
	// same process, replaced by the next write (a /clear after a startup),
	// private to the user, and ignored for another process or for an
	// earlier process that had the same pid.
	dir := t.TempDir()
	self := binding.KeyOf("claude-code", os.Getpid())
	assert.Empty(t, binding.Read(dir, self), "nothing recorded yet")

	require.NoError(t, binding.Write(dir, self, "conv-1"))
	assert.Equal(t, "conv-1", binding.Read(dir, self))
	require.NoError(t, binding.Write(dir, self, "conv-2"))
	assert.Equal(t, "conv-2", binding.Read(dir, self))

	fi, err := os.Stat(filepath.Join(dir, "bind"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	other := binding.KeyOf("claude-code", os.Getppid())
	assert.Empty(t, binding.Read(dir, other), "another process")
	reused := self
	reused.Start += "0"
	assert.Empty(t, binding.Read(dir, reused), "a later process with the same pid")
	assert.Empty(t, binding.Read(dir, binding.KeyOf("codex", os.Getpid())), "another host")

	assert.Error(t, binding.Write(dir, self, ""))
	assert.Error(t, binding.Write(dir, self, "a\nb"))
	assert.Error(t, binding.Write(dir, binding.Key{Host: "claude-code"}, "conv"))
	assert.Equal(t, "conv-2", binding.Read(dir, self), "a refused write changes nothing")
}
