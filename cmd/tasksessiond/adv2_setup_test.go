package main_test

import (
	"os"
	"path/filepath"
	"strings"
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

func TestSetupProjectInHomeIsRefused(t *testing.T) {
	// Ensures setup --project run in HOME, where a host's project
	// settings file is the user's own, is refused: it edited the user's
	// settings, and --project --uninstall then took the user's setup out.
	// OpenCode's project file is the user's in its config directory.
	for name, rel := range map[string]string{"claude-code": "", "gemini": "", "qwen": "", "opencode": ".config/opencode"} {
		t.Run(name, func(t *testing.T) {
			e := newSetupEnv(t)
			_, stderr, code := e.run(t, "setup", name, "--bin", e.bin)
			require.Zero(t, code, stderr)
			before := e.snapshot(t)
			dir := filepath.Join(e.home, rel)
			out, code := e.runIn(t, dir, trust, "setup", name, "--project", "--bin", e.bin)
			assert.NotZero(t, code)
			assert.Contains(t, out, "not a project's")
			_, code = e.runIn(t, dir, trust, "setup", name, "--project", "--uninstall", "--bin", e.bin)
			assert.NotZero(t, code)
			assert.Equal(t, before, e.snapshot(t), "the user's setup was changed")
		})
	}
}

func TestSetupUninstallWithAnotherBinKeepsTheRecordOfWhatItLeaves(t *testing.T) {
	// Ensures an uninstall run without the --bin setup was given, which
	// leaves Codex's server (it runs another command), keeps the record
	// of config.toml, which setup made: the uninstall with the right
	// --bin then removed the server but left config.toml empty, and
	// ~/.codex and the record with it.
	e := newSetupEnv(t)
	bin := filepath.Join(e.home, "elsewhere", "tsd")
	_, stderr, code := e.run(t, "setup", "codex", "--bin", bin)
	require.Zero(t, code, stderr)
	stdout, stderr, code := e.run(t, "setup", "codex", "--uninstall", "--bin", e.bin)
	require.Zero(t, code, stderr)
	assert.Contains(t, stdout, "runs "+bin+" mcp now: left")
	_, stderr, code = e.run(t, "setup", "codex", "--uninstall", "--bin", bin)
	require.Zero(t, code, stderr)
	assert.NoDirExists(t, filepath.Join(e.home, ".codex"), "setup's ~/.codex is left")
	assert.NoFileExists(t, e.record())
}

func TestSetupUninstallWithAnotherBinLeavesCodexsBlock(t *testing.T) {
	// Ensures an uninstall run without the --bin setup was given leaves
	// setup's block in config.toml whole, and says to run it with that
	// --bin, which then gives the user's bytes back: it took the block's
	// markers out and left its tables, and the blank line setup put
	// before the block then stayed, with a backup.
	e := newSetupEnv(t)
	e.write(t, userFiles["codex"])
	before := e.snapshot(t)
	bin := filepath.Join(e.home, "elsewhere", "tsd")
	_, stderr, code := e.run(t, "setup", "codex", "--bin", bin)
	require.Zero(t, code, stderr)
	set := e.snapshot(t)
	stdout, stderr, code := e.run(t, "setup", "codex", "--uninstall", "--bin", e.bin)
	require.Zero(t, code, stderr)
	assert.Contains(t, stdout, "--bin")
	assert.Equal(t, set[".codex/config.toml"], e.snapshot(t)[".codex/config.toml"], "setup's block was changed")
	_, stderr, code = e.run(t, "setup", "codex", "--uninstall", "--bin", bin)
	require.Zero(t, code, stderr)
	assert.Equal(t, before, e.snapshot(t))
	assert.Empty(t, e.backups(t))
}

func TestSetupProjectKeepsTheBackupOfTheUsersConfig(t *testing.T) {
	// Ensures setup --project, which puts the trust of the project's hook
	// in the user's config.toml beside setup's own block, keeps the
	// backup of the user's original: it took the file with setup's block
	// in it for an original and wrote it over the backup, which then
	// stayed after both uninstalls, holding setup's block.
	e := newSetupEnv(t)
	e.write(t, userFiles["codex"])
	original := userFiles["codex"][".codex/config.toml"]
	project := filepath.Join(e.home, "proj")
	require.NoError(t, os.MkdirAll(project, 0o755))
	before := e.snapshot(t)
	_, stderr, code := e.run(t, "setup", "codex", "--bin", e.bin)
	require.Zero(t, code, stderr)
	out, code := e.runIn(t, project, nil, "setup", "codex", "--project", "--bin", e.bin)
	require.Zero(t, code, out)
	b, err := os.ReadFile(filepath.Join(e.home, ".codex", "config.toml.tasksessiond-backup"))
	require.NoError(t, err)
	assert.Equal(t, original, string(b), "the backup is not the user's original")
	_, stderr, code = e.run(t, "setup", "codex", "--uninstall", "--bin", e.bin)
	require.Zero(t, code, stderr)
	out, code = e.runIn(t, project, nil, "setup", "codex", "--project", "--uninstall", "--bin", e.bin)
	require.Zero(t, code, out)
	assert.Equal(t, before, e.snapshot(t))
	assert.Empty(t, e.backups(t))
}

func TestSetupAgainKeepsTheBackupOfTheUsersSettings(t *testing.T) {
	// Ensures a second setup that changes a file holding only setup's
	// rules (set up --no-hook, then with the hook) keeps the backup of
	// the user's original: it took the file with setup's rules in it for
	// an original and wrote it over the backup, which then stayed after
	// uninstall.
	e := newSetupEnv(t)
	e.write(t, userFiles["claude-code"])
	before := e.snapshot(t)
	_, stderr, code := e.run(t, "setup", "claude-code", "--no-hook", "--bin", e.bin)
	require.Zero(t, code, stderr)
	_, stderr, code = e.run(t, "setup", "claude-code", "--bin", e.bin)
	require.Zero(t, code, stderr)
	b, err := os.ReadFile(filepath.Join(e.home, ".claude", "settings.json.tasksessiond-backup"))
	require.NoError(t, err)
	assert.Equal(t, userFiles["claude-code"][".claude/settings.json"], string(b), "the backup is not the user's original")
	_, stderr, code = e.run(t, "setup", "claude-code", "--uninstall", "--bin", e.bin)
	require.Zero(t, code, stderr)
	assert.Equal(t, before, e.snapshot(t))
	assert.Empty(t, e.backups(t))
}

func TestSetupUninstallRemovesTheRecordThoughTheUserWritesBesideIt(t *testing.T) {
	// Ensures the last uninstall removes setup's record and its
	// directory though a directory setup made on the way to it
	// (~/.local) holds the user's since: the record kept the directories
	// it could not remove, so it stayed, in the directory the steps said
	// was removed, and every later uninstall wrote it again.
	e := newSetupEnv(t)
	_, stderr, code := e.run(t, "setup", "gemini", "--bin", e.bin)
	require.Zero(t, code, stderr)
	require.NoError(t, os.MkdirAll(filepath.Join(e.home, ".local", "bin"), 0o755))
	_, stderr, code = e.run(t, "setup", "gemini", "--uninstall", "--bin", e.bin)
	require.Zero(t, code, stderr)
	assert.NoFileExists(t, e.record())
	assert.NoDirExists(t, filepath.Dir(e.record()))
	assert.DirExists(t, filepath.Join(e.home, ".local", "bin"))
}

func TestSetupDryRunSaysTheNotes(t *testing.T) {
	// Ensures --dry-run prints the notes the real run prints (what setup
	// leaves, and why), as it prints the steps: it printed the steps and
	// the diff only, so a dry run of an uninstall with another --bin did
	// not say the server stays.
	e := newSetupEnv(t)
	e.write(t, userFiles["claude-code"])
	bin := filepath.Join(e.home, "elsewhere", "tsd")
	dry, stderr, code := e.run(t, "setup", "claude-code", "--bin", bin, "--dry-run")
	require.Zero(t, code, stderr)
	out, stderr, code := e.run(t, "setup", "claude-code", "--bin", bin)
	require.Zero(t, code, stderr)
	udry, stderr, code := e.run(t, "setup", "claude-code", "--uninstall", "--bin", e.bin, "--dry-run")
	require.Zero(t, code, stderr)
	uout, stderr, code := e.run(t, "setup", "claude-code", "--uninstall", "--bin", e.bin)
	require.Zero(t, code, stderr)
	for _, run := range [][2]string{{dry, out}, {udry, uout}} {
		require.Contains(t, run[1], "  note: ")
		for _, line := range strings.Split(run[1], "\n") {
			if strings.HasPrefix(line, "  note: ") {
				assert.Contains(t, run[0], line+"\n", "--dry-run did not say the note")
			}
		}
	}
}
