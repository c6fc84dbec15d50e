package claudecode_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
)

// TestReadmeHookMatcher ensures the SessionStart matcher docs/HOSTS.md tells
// users to configure lets through every source Claude Code sends (it needs
// no Claude Code): a matcher without "clear" and "fork" leaves the bridge
// on the old list after /clear and a fork without its list.
func TestReadmeHookMatcher(t *testing.T) {
	root, err := harness.RepoRoot()
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(root, "docs", "HOSTS.md"))
	require.NoError(t, err)
	require.Contains(t, string(b), `"SessionStart"`, "docs/HOSTS.md shows no SessionStart hook")
	// No matcher matches every source.
	for _, m := range regexp.MustCompile(`"matcher":\s*"([^"]*)"`).FindAllSubmatch(b, -1) {
		re, err := regexp.Compile("^(?:" + string(m[1]) + ")$")
		require.NoError(t, err)
		for _, source := range claudecode.HookSources {
			assert.True(t, len(m[1]) == 0 || re.MatchString(source),
				"the README's SessionStart matcher %q does not match source %q, which Claude Code %s sends", m[1], source, claudecode.Version)
		}
	}
}
