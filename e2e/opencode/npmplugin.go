package opencode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// UseNPMPlugin swaps the plugin install.sh put in h's config for the npm
// package opencode-tasksessiond, installed with the README's command,
// "opencode plugin opencode-tasksessiond --global", but with npm's spec
// for the release's tarball, "file:<tarball>", in place of the name:
// OpenCode installs either into its package cache the same way, with the
// package's dependency (@opencode-ai/plugin) from the registry, so this is
// the published package's install. (A bare path, or one starting with "."
// or "file://", is a local module to OpenCode: it reads the package.json
// beside it, which for a .tgz fails, "Manifest read failed".) The "tools"
// fragment install.sh merged stays: the npm plugin leaves todowrite on.
func (h *Host) UseNPMPlugin(tarball string) string {
	tb := h.TB()
	tb.Helper()
	if err := os.Remove(filepath.Join(h.Config, "plugin", "tasksessiond.ts")); err != nil {
		tb.Fatal(err)
	}
	abs, err := filepath.Abs(tarball)
	if err != nil {
		tb.Fatal(err)
	}
	spec := "file:" + abs
	out := h.Command(tb, 5*time.Minute, "plugin", spec, "--global")
	if out.Err != nil || !strings.Contains(out.Stdout+out.Stderr, "Installed") {
		tb.Fatalf("opencode plugin %s --global: %v\nstdout:\n%s\nstderr:\n%s", spec, out.Err, out.Stdout, out.Stderr)
	}
	var cfg struct {
		Plugin []string `json:"plugin"`
	}
	for _, name := range []string{"opencode.jsonc", "opencode.json"} {
		if b, err := os.ReadFile(filepath.Join(h.Config, name)); err == nil && json.Unmarshal(b, &cfg) == nil && len(cfg.Plugin) > 0 {
			break
		}
	}
	if len(cfg.Plugin) != 1 || cfg.Plugin[0] != spec {
		tb.Fatalf("opencode plugin: the config's plugin list is %v, want [%s]", cfg.Plugin, spec)
	}
	return spec
}
