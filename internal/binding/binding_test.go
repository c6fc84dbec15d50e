package binding_test

import (
	"os"
	"path/filepath"
	"strconv"
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
	require.NoError(t, os.Chmod(dir, 0o700)) // as the daemon's runtime directory is
	self := binding.KeyOf("claude-code", os.Getpid())
	assert.Empty(t, binding.Read(dir, self), "nothing recorded yet")

	require.NoError(t, binding.Write(dir, self, binding.Conversation{ID: "conv-1"}))
	assert.Equal(t, binding.Conversation{ID: "conv-1"}, binding.Read(dir, self))
	conv2 := binding.Conversation{ID: "conv-2", Transcript: "/home/u/.claude/projects/p/conv-2.jsonl"}
	require.NoError(t, binding.Write(dir, self, conv2))
	assert.Equal(t, conv2, binding.Read(dir, self))

	fi, err := os.Stat(filepath.Join(dir, "bind"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	other := binding.KeyOf("claude-code", os.Getppid())
	assert.Empty(t, binding.Read(dir, other), "another process")
	reused := self
	reused.Start += "0"
	assert.Empty(t, binding.Read(dir, reused), "a later process with the same pid")
	assert.Empty(t, binding.Read(dir, binding.KeyOf("codex", os.Getpid())), "another host")

	assert.Error(t, binding.Write(dir, self, binding.Conversation{}))
	assert.Error(t, binding.Write(dir, self, binding.Conversation{ID: "a\nb"}))
	assert.Error(t, binding.Write(dir, self, binding.Conversation{ID: "a", Transcript: "x\ny"}))
	assert.Error(t, binding.Write(dir, binding.Key{Host: "claude-code"}, binding.Conversation{ID: "conv"}))
	assert.Equal(t, conv2, binding.Read(dir, self), "a refused write changes nothing")
}

func TestBindingRefusesASharedDirectory(t *testing.T) {
	// Ensures a binding, which redirects a bridge's writes, is neither
	// written nor read in a directory others can write to.
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	self := binding.KeyOf("claude-code", os.Getpid())
	err := binding.Write(dir, self, binding.Conversation{ID: "conv"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "open to other users")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "bind"), 0o777))
	require.NoError(t, os.Chmod(filepath.Join(dir, "bind"), 0o777))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bind", "claude-code-"+strconv.Itoa(os.Getpid())), []byte(self.Start+"\nplanted\n"), 0o644))
	assert.Empty(t, binding.Read(dir, self).ID, "a planted binding in a shared directory is ignored")
}
