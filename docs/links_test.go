// Package docs_test checks the repository's documents.
package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// link matches a Markdown link's target.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

func TestLinksStayInTheRepository(t *testing.T) {
	// Ensures every relative link in the README and docs/ names a file in
	// this repository: a clone on its own has every document it points to.
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files = append(files, filepath.Join(root, "README.md"), filepath.Join(root, "BENCHMARKS.md"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			abs := filepath.Clean(filepath.Join(filepath.Dir(f), target))
			rel, err := filepath.Rel(root, abs)
			require.NoError(t, err)
			assert.False(t, strings.HasPrefix(rel, ".."), "%s links outside the repository: %s", filepath.Base(f), m[1])
			_, err = os.Stat(abs)
			assert.NoError(t, err, "%s links to a missing file: %s", filepath.Base(f), m[1])
		}
	}
}
