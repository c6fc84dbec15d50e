package opencode

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// UseNPMPlugin swaps the plugin install.sh put in h's config for the npm
// package opencode-tasksessiond, installed as its README says, with
// "opencode plugin <module> --global", from tarball (unpacked, as npm
// would deliver it; OpenCode's command takes a directory for a local
// module). The package's one dependency, @opencode-ai/plugin, is the
// harness's copy (OpenCode would install it from npm). The "tools"
// fragment install.sh merged stays: the npm plugin leaves todowrite on.
func (h *Host) UseNPMPlugin(tarball string) string {
	tb := h.TB()
	tb.Helper()
	if err := os.Remove(filepath.Join(h.Config, "plugin", "tasksessiond.ts")); err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(h.Root, "npm-plugin")
	h.Mkdir(dir)
	if out, err := exec.Command("tar", "-xzf", tarball, "-C", dir).CombinedOutput(); err != nil {
		tb.Fatalf("tar -xzf %s: %v\n%s", tarball, err, out)
	}
	pkg := filepath.Join(dir, "package")
	if err := os.Symlink(filepath.Join(pluginDeps(tb), "node_modules"), filepath.Join(pkg, "node_modules")); err != nil {
		tb.Fatal(err)
	}
	out := h.Command(tb, 120*time.Second, "plugin", pkg, "--global")
	if out.Err != nil || !strings.Contains(out.Stdout+out.Stderr, "Installed") {
		tb.Fatalf("opencode plugin %s --global: %v\nstdout:\n%s\nstderr:\n%s", pkg, out.Err, out.Stdout, out.Stderr)
	}
	var cfg struct {
		Plugin []string `json:"plugin"`
	}
	for _, name := range []string{"opencode.jsonc", "opencode.json"} {
		if b, err := os.ReadFile(filepath.Join(h.Config, name)); err == nil && json.Unmarshal(b, &cfg) == nil && len(cfg.Plugin) > 0 {
			break
		}
	}
	if len(cfg.Plugin) != 1 || cfg.Plugin[0] != pkg {
		tb.Fatalf("opencode plugin: the config's plugin list is %v, want [%s]", cfg.Plugin, pkg)
	}
	return pkg
}
