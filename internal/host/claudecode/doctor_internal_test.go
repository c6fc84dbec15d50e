package claudecode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/host"
)

// repository makes a git repository with a deny rule for the server in
// its root's .claude/settings.local.json, and returns its root and a
// subfolder.
func repository(t *testing.T) (root, sub string) {
	t.Helper()
	root = host.RealPath(t.TempDir())
	sub = filepath.Join(root, "sub")
	for _, d := range []string{filepath.Join(root, ".git"), filepath.Join(root, ".claude"), sub} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, ".claude", "settings.local.json"), []byte(`{"permissions": {"deny": ["mcp__tasks"]}}`), 0o600))
	return root, sub
}

func TestDiagnoseReadsTheGitRootsLocalSettingsOnlyIfTheUserOwnsIt(t *testing.T) {
	// Ensures doctor, in a subfolder, reads the git root's
	// settings.local.json only where Claude Code (2.1.328) does: when the
	// user it runs as owns the root, its .git and its .claude. Doctor once
	// read it whoever owned them, and named a deny rule Claude Code never
	// saw.
	root, sub := repository(t)
	o := host.Options{Project: sub, Getenv: func(k string) string { return map[string]string{"HOME": t.TempDir()}[k] }}
	local := filepath.Join(root, ".claude", "settings.local.json")
	blocked := func() string {
		var b strings.Builder
		for _, f := range (Host{}).Diagnose(o).Blocked {
			b.WriteString(f.Problem + "\n")
		}
		return b.String()
	}
	assert.Contains(t, blocked(), `the deny rule "mcp__tasks" in `+local, "the user's own repository")
	was := euid
	t.Cleanup(func() { euid = was })
	euid = func() int { return was() + 1 }
	assert.Empty(t, blocked(), "another user's repository")
}

func TestOwnsRoot(t *testing.T) {
	// Ensures the ownership check is Claude Code's (2.1.328, jvl): the
	// root, its .git (which must be there) and its .claude if any, each
	// owned by the user; a link is judged by its own owner, not its
	// target's.
	me := os.Geteuid()
	t.Run("OK", func(t *testing.T) {
		// the user's own repository, with a .claude or without
		root, _ := repository(t)
		assert.True(t, ownsRoot(root, me))
		require.NoError(t, os.RemoveAll(filepath.Join(root, ".claude")))
		assert.True(t, ownsRoot(root, me))
	})
	t.Run("OtherUser", func(t *testing.T) {
		// another user's repository
		root, _ := repository(t)
		assert.False(t, ownsRoot(root, me+1))
	})
	t.Run("NoGit", func(t *testing.T) {
		// a root without its .git (gone since it was found)
		root, _ := repository(t)
		require.NoError(t, os.RemoveAll(filepath.Join(root, ".git")))
		assert.False(t, ownsRoot(root, me))
	})
	t.Run("ClaudeNotADirectory", func(t *testing.T) {
		// a .claude that is a file counts as it is: owned by the user
		root, _ := repository(t)
		require.NoError(t, os.RemoveAll(filepath.Join(root, ".claude")))
		require.NoError(t, os.WriteFile(filepath.Join(root, ".claude"), nil, 0o600))
		assert.True(t, ownsRoot(root, me))
	})
	if me != 0 {
		return // only root can give a file to another user
	}
	for _, name := range []string{"", ".git", ".claude"} {
		t.Run("Chowned"+name, func(t *testing.T) {
			// one of the three given to another user
			root, _ := repository(t)
			require.NoError(t, os.Lchown(filepath.Join(root, name), 4242, 4242))
			assert.False(t, ownsRoot(root, me))
			assert.False(t, ownsRoot(root, 4242))
		})
	}
	t.Run("ChownedLinkTarget", func(t *testing.T) {
		// a .git link of the user's to another user's folder: lstat
		// reads the link's owner
		root, _ := repository(t)
		other := t.TempDir()
		require.NoError(t, os.Chown(other, 4242, 4242))
		require.NoError(t, os.RemoveAll(filepath.Join(root, ".git")))
		require.NoError(t, os.Symlink(other, filepath.Join(root, ".git")))
		assert.True(t, ownsRoot(root, me))
	})
}

func TestDiagnoseReadsTheHomeFoldersLocalSettingsThere(t *testing.T) {
	// Ensures doctor run in the home folder, whose .claude is the user's
	// own configuration, reads its .claude/settings.local.json as the
	// folder's local settings: Claude Code 2.1.328 started there (a git
	// repository or not) honours a deny rule in it (the model was offered
	// none of the tools), where doctor skipped the folder's files and said
	// set up. Elsewhere that file is not read (the tools were offered).
	home := host.RealPath(t.TempDir())
	local := filepath.Join(home, ".claude", "settings.local.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(local), 0o755))
	require.NoError(t, os.WriteFile(local, []byte(`{"permissions": {"deny": ["mcp__tasks"]}}`), 0o600))
	blocked := func(dir string) string {
		o := host.Options{Project: dir, Getenv: func(k string) string { return map[string]string{"HOME": home}[k] }}
		var b strings.Builder
		for _, f := range (Host{}).Diagnose(o).Blocked {
			b.WriteString(f.Problem + "\n")
		}
		return b.String()
	}
	assert.Contains(t, blocked(home), `the deny rule "mcp__tasks" in `+local)
	assert.Equal(t, 1, strings.Count(blocked(home), "deny rule"), "read once")
	assert.Empty(t, blocked(host.RealPath(t.TempDir())), "elsewhere")
}
