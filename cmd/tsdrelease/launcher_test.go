package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLauncher runs the npm package's launcher with the real Node, laid
// out as npm installs it globally, with a stand-in for the platform's
// binary: it runs that binary with the arguments and exit status passed
// through, the process that ran it is its host's parent (the binary's
// parent, or the launcher saying whose child it is), and it puts the
// binary in its own place, so the next run starts no Node.
func TestLauncher(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	lib := filepath.Join(t.TempDir(), "lib", "node_modules")
	launcher := filepath.Join(lib, "tasksessiond", "bin", "tasksessiond")
	src, err := os.ReadFile(filepath.Join("..", "..", "npm", "tasksessiond", "bin", "tasksessiond"))
	require.NoError(t, err)
	require.NoError(t, writeFile(launcher, src, 0o755))
	// The stand-in prints what the Go binary would see, and exits 3.
	stand := "#!/bin/sh\necho \"$PPID|$TASKSESSIOND_LAUNCHER|$*\"\nexit 3\n"
	bin := filepath.Join(lib, "tasksessiond", "node_modules", "tasksessiond-"+runtime.GOOS+"-"+arch, "bin", "tasksessiond")
	require.NoError(t, writeFile(bin, []byte(stand), 0o755))

	out, err := exec.Command(node, launcher, "version", "--json").Output()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 3, exit.ExitCode())
	f := strings.Split(strings.TrimSpace(string(out)), "|")
	require.Len(t, f, 3, "%s", out)
	assert.Equal(t, "version --json", f[2])
	// As cmd/tasksessiond's hostParent reads it.
	var ppid, lpid, lparent int
	fmt.Sscan(f[0], &ppid)
	if _, err := fmt.Sscanf(f[1], "%d %d", &lpid, &lparent); err == nil && lpid == ppid {
		ppid = lparent
	}
	assert.Equal(t, os.Getpid(), ppid, "the binary's host is not the process that ran the launcher: %s", out)

	now, err := os.ReadFile(launcher)
	require.NoError(t, err)
	assert.Equal(t, stand, string(now), "the launcher did not put the binary in its place")
	out, _ = exec.Command(launcher, "again").Output()
	assert.Equal(t, fmt.Sprintf("%d||again", os.Getpid()), strings.TrimSpace(string(out)), "the second run went through Node")
}
