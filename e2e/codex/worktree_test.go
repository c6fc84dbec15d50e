package codex_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/codex"
)

// git runs git in dir and returns its output, failing the test unless it
// succeeds.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=e2e", "-c", "user.email=e2e@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	return string(out)
}

func TestSetupProjectWorktree(t *testing.T) {
	// Ensures "setup codex --project" in a linked git worktree (git
	// worktree add) the user trusts works as in a checkout: Codex 0.169.0
	// reads the worktree's .codex/config.toml (the server) but a linked
	// worktree's hooks from the main checkout's .codex/hooks.json, and
	// the hook's trust keyed by that file's path; setup puts them there,
	// says so, doctor finds it set up, and Codex gives the model the four
	// tools and runs the hook. --uninstall gives back the user's
	// config.toml byte for byte and removes every file setup made, in the
	// worktree and in the main checkout (git sees nothing else there but
	// setup's backups).
	t.Parallel()
	script := planScript()
	h := codex.New(t, codex.Options{Respond: script.Respond, NoSetup: true})
	repo, worktree := filepath.Join(h.Root, "repo"), filepath.Join(h.Root, "worktree")
	h.Mkdir(repo)
	git(t, repo, "init", "-q")
	h.WriteFile(filepath.Join(repo, "README"), "the project\n", 0o644)
	git(t, repo, "add", "README")
	git(t, repo, "commit", "-qm", "first")
	git(t, repo, "worktree", "add", "-q", "-b", "feature", worktree)
	var err error
	repo, err = filepath.EvalSymlinks(repo)
	require.NoError(t, err)
	worktree, err = filepath.EvalSymlinks(worktree)
	require.NoError(t, err)

	// The user trusts the worktree (as Codex records it when the user
	// trusts the folder there); setup runs, and Codex starts, in it.
	h.Project = worktree
	cfg := filepath.Join(h.CodexHome, "config.toml")
	user := "# my Codex settings\n" + h.UserConfig("", "")
	h.WriteFile(cfg, user, 0o600)
	worktreeCfg := filepath.Join(worktree, ".codex", "config.toml")
	repoHooks := filepath.Join(repo, ".codex", "hooks.json")

	out := h.Setup(t, "codex", "--project")
	assert.Contains(t, out, "is trusted in "+cfg)
	assert.Contains(t, out, "is in a linked git worktree of "+repo)
	assert.Contains(t, read(t, worktreeCfg), "[mcp_servers.tasks]")
	assert.NoFileExists(t, filepath.Join(worktree, ".codex", "hooks.json"), "Codex does not read a linked worktree's hooks.json")
	assert.Contains(t, read(t, repoHooks), "hook codex")
	set := read(t, cfg)
	require.True(t, strings.HasPrefix(set, user), "the user's bytes are not kept in front:\n%s", set)
	assert.Contains(t, set, `[hooks.state."`+repoHooks+`:session_start:0:0"]`)
	setCfg, setHooks := read(t, worktreeCfg), read(t, repoHooks)
	h.Setup(t, "codex", "--project")
	assert.Equal(t, set, read(t, cfg), "a second setup changed config.toml")
	assert.Equal(t, setCfg, read(t, worktreeCfg), "a second setup changed the worktree's config.toml")
	assert.Equal(t, setHooks, read(t, repoHooks), "a second setup changed the main checkout's hooks.json")
	msg, err := h.RunTSD([]string{"doctor", "--project", "--socket", h.Daemon.Socket, "--db", h.Daemon.DB, "--bin", h.Rec.Bin, "codex"})
	assert.NoError(t, err, "doctor --project in the worktree: %s", msg)

	assertPlanned(t, h, script)

	h.Setup(t, "codex", "--project", "--uninstall")
	assert.Equal(t, user, read(t, cfg), "--uninstall did not give back the user's config.toml")
	assert.NoFileExists(t, worktreeCfg, "--uninstall left the worktree's config.toml setup made")
	assert.NoFileExists(t, repoHooks, "--uninstall left the main checkout's hooks.json setup made")
	for _, dir := range []string{repo, worktree} {
		for _, line := range strings.Split(strings.TrimSpace(git(t, dir, "status", "--porcelain", "-uall")), "\n") {
			assert.Empty(t, line, "--uninstall left %s changed", dir)
		}
	}
}
