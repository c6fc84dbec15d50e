package gemini

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksessiond/tasksessiond/internal/host"
)

func TestDiagnoseReadsTheSystemDefaults(t *testing.T) {
	// Ensures doctor reads Gemini CLI's system defaults file
	// (GEMINI_CLI_SYSTEM_DEFAULTS_PATH, else system-defaults.json beside
	// the system settings) as Gemini CLI 0.61.0 does: mcp.excluded there
	// blocks the server ("gemini mcp list": Blocked) where doctor once
	// said "set up"; and that a system file others may write is skipped,
	// as Gemini CLI skips it.
	home, sys := t.TempDir(), t.TempDir()
	defaults := filepath.Join(sys, "system-defaults.json")
	if err := os.WriteFile(defaults, []byte(`{"mcp": {"excluded": ["tasks"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_CLI_SYSTEM_SETTINGS_PATH": filepath.Join(sys, "settings.json")}
	o := host.Options{Project: home, Getenv: func(k string) string { return env[k] }}
	blocked := func() string {
		var b strings.Builder
		for _, f := range (Host{}).Diagnose(o).Blocked {
			b.WriteString(f.Problem + "\n")
		}
		return b.String()
	}
	was := secure
	t.Cleanup(func() { secure = was })
	secure = func(string) bool { return true }
	if got := blocked(); !strings.Contains(got, "mcp.excluded in "+defaults+" names the server tasks") {
		t.Errorf("beside the system settings: %q", got)
	}
	moved := filepath.Join(t.TempDir(), "d.json")
	if err := os.Rename(defaults, moved); err != nil {
		t.Fatal(err)
	}
	env["GEMINI_CLI_SYSTEM_DEFAULTS_PATH"] = moved
	if got := blocked(); !strings.Contains(got, "mcp.excluded in "+moved+" names the server tasks") {
		t.Errorf("GEMINI_CLI_SYSTEM_DEFAULTS_PATH: %q", got)
	}
	secure = was // under the temporary folder, which all may write
	if got := blocked(); got != "" {
		t.Errorf("a file Gemini CLI skips as insecure: %q", got)
	}
}
