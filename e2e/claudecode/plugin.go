package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
)

// The plugin's names: the repository's marketplace (.claude-plugin/) lists
// the plugin "tasksessiond" (contrib/claude-code), whose MCP server is
// "tasks"; Claude Code names a plugin's tools
// mcp__plugin_<plugin>_<server>__<tool>.
const (
	Plugin       = "tasksessiond"
	PluginServer = "plugin_" + Plugin + "_tasks"
	PluginPrefix = "mcp__" + PluginServer + "__"
)

// Plugged is a Host whose Task tools and hook come from the repository's
// plugin, installed with "claude plugin install", instead of the
// harness's own configuration: .claude.json has no MCP server,
// settings.json no hook and no allow rule (the plugin's PreToolUse hook
// allows its tools). The plugin runs "tasksessiond" from PATH, which is
// Bin (a wrapper logging each run's arguments) unless the test put
// another first.
type Plugged struct {
	*Host
	Bin  string // the directory of the tasksessiond wrapper, first on PATH
	args string // its log: one line of arguments a run
	errs string // the stderr of every run
}

// UsePlugin turns h into a Host with the plugin: it takes the harness's
// MCP server, hook and allow rule out of h's config, puts a tasksessiond
// wrapper (running h.TSD) first on PATH, and installs the plugin from the
// repository's marketplace as a user would, with the pinned CLI.
func UsePlugin(tb testing.TB, h *Host) *Plugged {
	tb.Helper()
	p := &Plugged{Host: h, Bin: filepath.Join(h.Root, "plugin-bin"), args: filepath.Join(h.Root, "tsd-args.log"), errs: filepath.Join(h.Root, "tsd.stderr")}
	h.Mkdir(p.Bin)
	q := harness.ShellQuote
	h.WriteFile(filepath.Join(p.Bin, "tasksessiond"), `#!/bin/sh
printf '%s\n' "$*" >>`+q(p.args)+`
exec `+q(h.TSD)+` "$@" 2>>`+q(p.errs)+`
`, 0o700)
	h.Path = append([]string{p.Bin}, h.Path...)
	h.Unconfigure(tb)
	root, err := harness.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	p.Install(tb, root)
	h.Quiet(func(tb testing.TB) {
		if b, _ := os.ReadFile(p.errs); strings.TrimSpace(string(b)) != "" {
			tb.Errorf("tasksessiond (the plugin's bridge or hook) wrote to stderr:\n%s", b)
		}
	})
	h.AtFailure(func(tb testing.TB) {
		b, _ := os.ReadFile(p.args)
		e, _ := os.ReadFile(p.errs)
		tb.Logf("tasksessiond runs by the plugin:\n%s\nstderr:\n%s", b, e)
	})
	return p
}

// Unconfigure takes the harness's MCP server, hook and allow rule out of
// h's config: a user's before the plugin.
func (h *Host) Unconfigure(tb testing.TB) {
	tb.Helper()
	edit := func(name string, f func(map[string]any)) {
		path := filepath.Join(h.Config, name)
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		f(v)
		h.WriteJSON(path, v)
	}
	edit(".claude.json", func(v map[string]any) { delete(v, "mcpServers") })
	edit("settings.json", func(v map[string]any) { delete(v, "permissions"); delete(v, "hooks") })
}

// Install runs "claude plugin install tasksessiond --marketplace SOURCE",
// the README's line, failing the test unless it succeeds.
func (h *Host) Install(tb testing.TB, source string) {
	tb.Helper()
	out := h.Command(tb, 60*time.Second, "plugin", "install", Plugin, "--marketplace", source)
	if out.Err != nil {
		tb.Fatalf("claude plugin install: %v\nstdout:\n%s\nstderr:\n%s", out.Err, out.Stdout, out.Stderr)
	}
}

// Runs are the arguments of each run of tasksessiond by the plugin so far.
func (p *Plugged) Runs() []string {
	b, _ := os.ReadFile(p.args)
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}
