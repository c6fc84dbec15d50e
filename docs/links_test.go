// Package docs_test checks the repository's documents.
package docs_test

import (
	"os"
	"os/exec"
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
	files = append(files, filepath.Join(root, "README.md"), filepath.Join(root, "BENCHMARKS.md"), filepath.Join(root, "CHANGELOG.md"))
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

// tableEntry matches a package named in the first column of DESIGN.md's
// package table ("e2e/…" stands for every package under e2e/).
var tableEntry = regexp.MustCompile("`((?:internal|cmd|e2e|contrib)/[^`]*|tasksessiond|wire|client|migrations[^`]*)`")

func TestDesignNamesEveryPackage(t *testing.T) {
	// Ensures DESIGN.md's package table, the one table of the packages,
	// names each package `go list` finds and none that is gone.
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	list := exec.Command("go", "list", "-f", "{{.ImportPath}}", "./...")
	list.Dir = root
	out, err := list.Output()
	require.NoError(t, err)
	const module = "github.com/tasksessiond/tasksessiond/"
	listed := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		p = strings.TrimPrefix(p, module)
		switch {
		case p == strings.TrimSuffix(module, "/"):
			p = "tasksessiond" // the module root
		case p == "docs", strings.HasPrefix(p, "migrations"):
			continue // this test's own package; the migrations are SQL
		case strings.HasPrefix(p, "e2e/"):
			p = "e2e/…"
		}
		listed[p] = true
	}
	design, err := os.ReadFile(filepath.Join(root, "docs", "DESIGN.md"))
	require.NoError(t, err)
	named := map[string]bool{}
	for _, line := range strings.Split(string(design), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		for _, m := range tableEntry.FindAllStringSubmatch(first, -1) {
			named[m[1]] = true
		}
	}
	for p := range listed {
		assert.True(t, named[p], "DESIGN.md's package table does not name %s", p)
	}
	for p := range named {
		assert.True(t, listed[p], "DESIGN.md's package table names %s, which go list does not find", p)
	}
}

func TestDocsStayShort(t *testing.T) {
	// Ensures the README stays a page for someone who wants to use the
	// daemon (the rest is in docs/, per reader), and BENCHMARKS.md the
	// latest run, how to read it and the targets (older runs are in git).
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	for name, most := range map[string]int{"README.md": 200, "BENCHMARKS.md": 400} {
		b, err := os.ReadFile(filepath.Join(root, name))
		require.NoError(t, err)
		assert.LessOrEqual(t, strings.Count(string(b), "\n"), most, "%s has more lines than its readers should wade through", name)
	}
}
