package main_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSetupRefusesADirectoryLinkToNothing(t *testing.T) {
	// Ensures a host directory that is a link to nothing (dotfiles not
	// checked out) refuses setup before it writes any file: setup had
	// written ~/.claude.json, then failed to make ~/.claude for
	// settings.json, and left the host set up by half.
	e := newSetupEnv(t)
	require.NoError(t, os.Symlink(filepath.Join(e.home, "dotfiles", "claude"), filepath.Join(e.home, ".claude")))
	_, stderr, code := e.run(t, "setup", "claude-code", "--bin", e.bin)
	assert.NotZero(t, code)
	assert.Contains(t, stderr, "nothing was changed")
	assert.NoFileExists(t, filepath.Join(e.home, ".claude.json"))
	assert.NoFileExists(t, e.record())
}
