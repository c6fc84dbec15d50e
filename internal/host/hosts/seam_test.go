package hosts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/tasksessiond/tasksessiond"

// hostName matches any host's name, as code or words would spell it.
var hostName = regexp.MustCompile(`(?i)claude|codex|gemini|open ?code|copilot|qwen`)

// host-agnostic are the packages that must name no host: whatever is
// particular to one lives in its package under internal/host.
var agnostic = []string{"internal/mcpbridge", "internal/hook", "cmd/tasksessiond"}

func TestNoHostIsNamedOutsideItsPackage(t *testing.T) {
	// Ensures the bridge, the hook and the command name no host, not even
	// in a comment or a help text: a new host is a new package under
	// internal/host, and these do not change.
	root := filepath.Join("..", "..", "..")
	for _, pkg := range agnostic {
		files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, pkg)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			for i, line := range strings.Split(string(b), "\n") {
				assert.False(t, hostName.MatchString(line), "%s:%d names a host: %s", filepath.ToSlash(f), i+1, strings.TrimSpace(line))
			}
		}
	}
}

func TestOnlyTheSeamReachesTheHosts(t *testing.T) {
	// Ensures the bridge and the hook depend on no host package, and the
	// command reaches the hosts only through internal/host/hosts.
	if testing.Short() {
		t.Skip("runs go list")
	}
	deps := func(args ...string) []string {
		t.Helper()
		cmd := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}"}, args...)...)
		cmd.Dir = filepath.Join("..", "..", "..")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	isHost := func(p string) bool {
		rest, ok := strings.CutPrefix(p, module+"/internal/host/")
		return ok && rest != "transcript" && !strings.HasPrefix(rest, "config")
	}
	for _, pkg := range []string{"./internal/mcpbridge", "./internal/hook"} {
		for _, line := range deps("-deps", pkg) {
			from, imports, _ := strings.Cut(line, ": ")
			for _, p := range strings.Fields(imports) {
				assert.False(t, isHost(p), "%s reaches host package %s (through %s)", pkg, p, from)
			}
		}
	}
	for _, line := range deps("./cmd/tasksessiond") {
		_, imports, _ := strings.Cut(line, ": ")
		for _, p := range strings.Fields(imports) {
			assert.False(t, isHost(p) && p != module+"/internal/host/hosts", "cmd/tasksessiond imports host package %s: it reaches hosts through internal/host/hosts", p)
		}
	}
}
