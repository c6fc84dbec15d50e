package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArchiveReproducible ensures an archive's bytes depend on its entries
// alone: written twice, at different times, they are equal, and every
// entry has the source date and no owner.
func TestArchiveReproducible(t *testing.T) {
	dir := t.TempDir()
	b := &builder{mtime: time.Unix(1_700_000_000, 0).UTC()}
	entries := []entry{{name: "tasksessiond", mode: 0o755, data: []byte("binary")}, {name: "hooks/", mode: 0o755, dir: true}, {name: "hooks/hooks.json", mode: 0o644, data: []byte("{}")}}
	one, two := filepath.Join(dir, "1.tar.gz"), filepath.Join(dir, "2.tar.gz")
	require.NoError(t, b.writeArchive(one, entries))
	require.NoError(t, os.Chtimes(one, time.Now(), time.Now()))
	require.NoError(t, b.writeArchive(two, entries))
	x, _ := os.ReadFile(one)
	y, _ := os.ReadFile(two)
	assert.Equal(t, x, y)

	zr, err := gzip.NewReader(bytes.NewReader(x))
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		names = append(names, h.Name)
		assert.True(t, h.ModTime.Equal(b.mtime), h.Name)
		assert.Zero(t, h.Uid, h.Name)
		assert.Empty(t, h.Uname, h.Name)
	}
	assert.Equal(t, []string{"tasksessiond", "hooks/", "hooks/hooks.json"}, names)
}

// TestGeminiExtension ensures the archive's Gemini CLI extension is the
// repository's with the release's version and its own binary
// (${extensionPath}) in every command that ran tasksessiond from PATH,
// and nothing else changed.
func TestGeminiExtension(t *testing.T) {
	b := &builder{Config: Config{Root: filepath.Join("..", "..")}, version: "1.2.3"}
	entries, err := b.geminiExtension()
	require.NoError(t, err)
	require.Len(t, entries, 3)
	var manifest struct {
		Name       string
		Version    string
		MCPServers map[string]struct {
			Command string
			Args    []string
		} `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal(entries[0].data, &manifest))
	assert.Equal(t, "tasksessiond", manifest.Name)
	assert.Equal(t, "1.2.3", manifest.Version)
	assert.Equal(t, "${extensionPath}${/}tasksessiond", manifest.MCPServers["tasks"].Command)
	assert.Equal(t, []string{"mcp"}, manifest.MCPServers["tasks"].Args)

	var hooks struct {
		Hooks map[string][]struct {
			Hooks []struct{ Type, Command string }
		}
	}
	require.NoError(t, json.Unmarshal(entries[2].data, &hooks))
	require.Contains(t, hooks.Hooks, "SessionStart")
	require.Contains(t, hooks.Hooks, "BeforeModel")
	for ev, defs := range hooks.Hooks {
		for _, d := range defs {
			for _, h := range d.Hooks {
				assert.Equal(t, `"${extensionPath}${/}tasksessiond" hook gemini`, h.Command, ev)
			}
		}
	}
}

// TestTargetsMatchPackage ensures the targets table and the npm package's
// optionalDependencies name the same platform packages, and that each
// target's names are the ones npm and Gemini CLI look for.
func TestTargetsMatchPackage(t *testing.T) {
	main, err := readJSON(filepath.Join("..", "..", "npm", "tasksessiond", "package.json"))
	require.NoError(t, err)
	require.NoError(t, checkOptional(main))
	delete(main["optionalDependencies"].(map[string]any), "tasksessiond-linux-x64")
	assert.Error(t, checkOptional(main))

	tg := Target{"linux", "amd64"}
	assert.Equal(t, "tasksessiond-linux-x64", tg.Package())
	assert.Equal(t, "linux.x64.tasksessiond.tar.gz", tg.Archive())
	assert.Equal(t, "darwin.arm64.tasksessiond.tar.gz", Target{"darwin", "arm64"}.Archive())
}

// TestServerJSON ensures the MCP registry's server.json describes the npm
// package: its name is the package's mcpName (the registry checks it),
// the package and version are the npm package's, run with "mcp" on stdio.
func TestServerJSON(t *testing.T) {
	root := filepath.Join("..", "..")
	s, err := readJSON(filepath.Join(root, "server.json"))
	require.NoError(t, err)
	pkg, err := readJSON(filepath.Join(root, "npm", "tasksessiond", "package.json"))
	require.NoError(t, err)
	assert.Equal(t, pkg["mcpName"], s["name"])
	assert.Equal(t, pkg["version"], s["version"])
	assert.LessOrEqual(t, len(s["description"].(string)), 100, "the registry takes 100 characters of description")
	packages := asList(s["packages"])
	require.Len(t, packages, 1)
	p := packages[0].(map[string]any)
	assert.Equal(t, "npm", p["registryType"])
	assert.Equal(t, pkg["name"], p["identifier"])
	assert.Equal(t, pkg["version"], p["version"])
	assert.Equal(t, map[string]any{"type": "stdio"}, p["transport"])
	assert.Equal(t, []any{map[string]any{"type": "positional", "value": "mcp"}}, p["packageArguments"])
}

// TestVersionsAgree ensures every manifest that names the next release's
// version names the same one as npm/tasksessiond/package.json (they are
// bumped together after a release), and CHANGELOG.md's top section is its.
func TestVersionsAgree(t *testing.T) {
	root := filepath.Join("..", "..")
	pkg, err := readJSON(filepath.Join(root, "npm", "tasksessiond", "package.json"))
	require.NoError(t, err)
	for _, f := range []string{"server.json", "gemini-extension.json", "contrib/claude-code/.claude-plugin/plugin.json", "npm/opencode-tasksessiond/package.json"} {
		m, err := readJSON(filepath.Join(root, f))
		require.NoError(t, err)
		assert.Equal(t, pkg["version"], m["version"], f)
	}
	for name, v := range pkg["optionalDependencies"].(map[string]any) {
		assert.Equal(t, pkg["version"], v, name)
	}
	changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	require.NoError(t, err)
	_, top, _ := strings.Cut(string(changelog), "\n## ")
	assert.True(t, strings.HasPrefix(top, pkg["version"].(string)+" "), "CHANGELOG.md's top section is not the next release's, %s", pkg["version"])
}

// TestLicenseAgrees ensures every manifest a user or a registry reads
// names the license LICENSE holds, so no package claims another.
func TestLicenseAgrees(t *testing.T) {
	root := filepath.Join("..", "..")
	text, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	require.NoError(t, err)
	pkg, err := readJSON(filepath.Join(root, "npm", "tasksessiond", "package.json"))
	require.NoError(t, err)
	id := pkg["license"].(string)
	// The first line of LICENSE is the license's name; the SPDX id of the MIT License is MIT.
	assert.Equal(t, id+" License", strings.SplitN(string(text), "\n", 2)[0])
	for _, f := range []string{"gemini-extension.json", "contrib/claude-code/.claude-plugin/plugin.json", "npm/opencode-tasksessiond/package.json"} {
		m, err := readJSON(filepath.Join(root, f))
		require.NoError(t, err)
		assert.Equal(t, id, m["license"], f)
	}
	market, err := readJSON(filepath.Join(root, ".claude-plugin", "marketplace.json"))
	require.NoError(t, err)
	for _, p := range asList(market["plugins"]) {
		assert.Equal(t, id, p.(map[string]any)["license"], "marketplace.json")
	}
	s, err := readJSON(filepath.Join(root, "server.json"))
	require.NoError(t, err)
	// server.json's schema has no license field; the registry keeps a publisher's own metadata here.
	meta, _ := s["_meta"].(map[string]any)
	own, _ := meta["io.modelcontextprotocol.registry/publisher-provided"].(map[string]any)
	assert.Equal(t, id, own["license"], "server.json")
}
