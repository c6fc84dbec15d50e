package qwen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/host"
)

func TestHome(t *testing.T) {
	// Ensures Qwen Code's directory is where 0.24.4 looks for it (each case
	// as "qwen mcp list" read it): $QWEN_HOME, "~" and "~/" (and "~\") the
	// home; a relative one from the folder Qwen Code runs in, the one
	// checked, not tasksessiond's working directory; unset, the QWEN_HOME
	// ~/.qwen/.env names, else ~/.env's, else ~/.qwen. Doctor and setup
	// once took a relative QWEN_HOME from their working directory and
	// read no .env.
	for _, c := range []struct {
		name, env, qwenEnv, homeEnv string
		want                        string // {home}, {project}
	}{
		{"Unset", "", "", "", "{home}/.qwen"},
		{"Absolute", "/opt/qwen/", "", "", "/opt/qwen"},
		{"Tilde", "~", "", "", "{home}"},
		{"TildeSlash", "~/q/r", "", "", "{home}/q/r"},
		{"TildeBackslash", `~\q\\r`, "", "", "{home}/q/r"},
		{"Relative", "rel/q", "", "", "{project}/rel/q"},
		{"EnvWinsOverFiles", "/from/env", "QWEN_HOME=/from/qwen-env\n", "", "/from/env"},
		{"QwenEnvFile", "", "# mine\nexport QWEN_HOME: \"/from/qwen-env\" # why\n", "QWEN_HOME=/from/home-env\n", "/from/qwen-env"},
		{"HomeEnvFile", "", "OTHER=1\n", "QWEN_HOME=/from/home-env#note\n", "/from/home-env"},
		{"LastLineWins", "", "QWEN_HOME=/first\nQWEN_HOME='/second'\n", "", "/second"},
		{"EmptyInQwenEnvFile", "", "QWEN_HOME=\n", "QWEN_HOME=/from/home-env\n", "/from/home-env"},
		{"RelativeInEnvFile", "", "", "QWEN_HOME=rel\n", "{project}/rel"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, project := t.TempDir(), t.TempDir()
			if c.qwenEnv != "" {
				require.NoError(t, os.MkdirAll(filepath.Join(h, ".qwen"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(h, ".qwen", ".env"), []byte(c.qwenEnv), 0o600))
			}
			if c.homeEnv != "" {
				require.NoError(t, os.WriteFile(filepath.Join(h, ".env"), []byte(c.homeEnv), 0o600))
			}
			env := map[string]string{"HOME": h, "QWEN_HOME": c.env}
			o := host.Options{Project: project, Getenv: func(k string) string { return env[k] }}
			want := strings.NewReplacer("{home}", h, "{project}", project).Replace(c.want)
			assert.Equal(t, want, home(o))
		})
	}
}

func TestPlanSaysQWEN_HOMEIsRelative(t *testing.T) {
	// Ensures setup says that a relative QWEN_HOME ties its settings to
	// the folder it ran in, which Qwen Code reads them from only when it
	// starts there; an absolute one, or "~/", is not named.
	dir := host.RealPath(t.TempDir())
	t.Chdir(dir)
	env := map[string]string{"HOME": t.TempDir(), "QWEN_HOME": "rel"}
	o := host.Options{Bin: "tasksessiond", Getenv: func(k string) string { return env[k] }}
	p, err := Host{}.Plan(o)
	require.NoError(t, err)
	assert.Contains(t, strings.Join(p.Notes, "\n"), "QWEN_HOME (rel) is relative: Qwen Code takes it from the folder each session starts in, so it reads "+filepath.Join(dir, "rel")+" only when started in "+dir)
	for _, d := range []string{"/abs", "~/q"} {
		env["QWEN_HOME"] = d
		p, err := Host{}.Plan(o)
		require.NoError(t, err)
		assert.NotContains(t, strings.Join(p.Notes, "\n"), "is relative", d)
	}
}

func TestHomeEmptyInTheEnvironment(t *testing.T) {
	// Ensures a QWEN_HOME set but empty in the environment leaves Qwen
	// Code's directory at ~/.qwen, whatever ~/.env names: 0.24.4 reads
	// the .env files only when the variable is not set at all ("qwen mcp
	// list" with QWEN_HOME= listed ~/.qwen's servers), where doctor read
	// ~/.env's and said set up over a directory Qwen Code did not read.
	h := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(h, ".env"), []byte("QWEN_HOME=/from/home-env\n"), 0o600))
	t.Setenv("HOME", h)
	t.Setenv("QWEN_HOME", "")
	o := host.Options{Project: t.TempDir()}
	assert.Equal(t, filepath.Join(h, ".qwen"), home(o))
	os.Unsetenv("QWEN_HOME")
	assert.Equal(t, "/from/home-env", home(o))
}

func TestHomeExportWithATab(t *testing.T) {
	// Ensures "export<tab>QWEN_HOME=..." in ~/.env is read as Qwen Code
	// 0.24.4 reads it ("qwen mcp list" listed that directory's servers),
	// where doctor and setup took ~/.qwen.
	h, project := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(h, ".env"), []byte("export\tQWEN_HOME=/from/home-env\n"), 0o600))
	o := host.Options{Project: project, Getenv: func(k string) string { return map[string]string{"HOME": h}[k] }}
	assert.Equal(t, "/from/home-env", home(o))
}
