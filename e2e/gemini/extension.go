package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
)

// AllowSetting is the one setting a user adds for the extension (an
// extension cannot allow its own tools: Gemini CLI drops an extension's
// ALLOW policy rules), as docs/HOSTS.md gives it.
var AllowSetting = map[string]any{"allowed": []string{TaskCreate, TaskList, TaskGet, TaskUpdate}}

// Extended is a Host whose Task tools and hooks come from a Gemini CLI
// extension installed with "gemini extensions install", instead of the
// harness's settings: settings.json has no MCP server and no hooks, only
// "tools" set to AllowSetting.
type Extended struct {
	*Host
	args string // the log of each run of the tasksessiond on PATH
}

// UseExtension turns h into a Host with the extension at source (a
// directory) installed. With onPath, a tasksessiond wrapper is first on
// PATH, as npm puts it there: it logs its arguments and passes the run
// to the harness's recording wrappers (so Hooks and MCPServers see the
// extension's runs); without it, nothing named tasksessiond is on PATH
// (an extension from a release archive runs its own binary). The daemon's
// socket and database reach both through the environment.
func UseExtension(tb testing.TB, h *Host, source string, onPath bool) *Extended {
	tb.Helper()
	e := &Extended{Host: h, args: filepath.Join(h.Root, "tsd-args.log")}
	if onPath {
		dir := filepath.Join(h.Root, "extension-bin")
		h.Mkdir(dir)
		q := harness.ShellQuote
		h.WriteFile(filepath.Join(dir, "tasksessiond"), `#!/bin/sh
printf '%s\n' "$*" >>`+q(e.args)+`
case "$1" in
hook|mcp) exec `+q(h.Rec.Bin)+` "$@" ;;
esac
exec `+q(h.TSD)+` "$@"
`, 0o700)
		h.Path = append([]string{dir}, h.Path...)
	}
	h.Vars = append(h.Vars, h.Daemon.Env()...)
	path := filepath.Join(h.Home, ".gemini", "settings.json")
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		tb.Fatal(err)
	}
	delete(s, "mcpServers")
	delete(s, "hooks")
	s["tools"] = AllowSetting
	h.WriteJSON(path, s)
	out := h.Command(tb, 120*time.Second, "extensions", "install", source, "--consent")
	if out.Err != nil || !strings.Contains(out.Stdout+out.Stderr, "installed successfully") {
		tb.Fatalf("gemini extensions install %s: %v\nstdout:\n%s\nstderr:\n%s", source, out.Err, out.Stdout, out.Stderr)
	}
	h.AtFailure(func(tb testing.TB) {
		b, _ := os.ReadFile(e.args)
		tb.Logf("tasksessiond runs by the extension:\n%s", b)
	})
	return e
}

// Runs are the arguments of each run of the tasksessiond on PATH so far.
func (e *Extended) Runs() []string {
	b, _ := os.ReadFile(e.args)
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}
