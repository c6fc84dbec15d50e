package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Target is one platform a release is built for.
type Target struct{ GOOS, GOARCH string }

// targets is what a release builds: the one table of platforms.
var targets = []Target{
	{"linux", "amd64"},
	{"linux", "arm64"},
	{"darwin", "amd64"},
	{"darwin", "arm64"},
}

func (t Target) String() string { return t.GOOS + "/" + t.GOARCH }

// Node is the target as Node.js names it (process.platform, process.arch),
// which npm's os and cpu fields and Gemini CLI's release install use.
func (t Target) Node() (platform, arch string) {
	arch = t.GOARCH
	if arch == "amd64" {
		arch = "x64"
	}
	return t.GOOS, arch
}

// Package is the target's npm package, tasksessiond-<platform>-<arch>:
// the main package's launcher looks for this name.
func (t Target) Package() string {
	p, a := t.Node()
	return "tasksessiond-" + p + "-" + a
}

// Archive is the target's archive, {platform}.{arch}.tasksessiond.tar.gz:
// Gemini CLI's install from a GitHub release takes the asset whose name
// starts with "<platform>.<arch>." (findReleaseAsset, 0.61.0).
func (t Target) Archive() string {
	p, a := t.Node()
	return p + "." + a + ".tasksessiond.tar.gz"
}

func findTarget(s string) (Target, bool) {
	for _, t := range targets {
		if t.String() == s {
			return t, true
		}
	}
	return Target{}, false
}

func targetList() string {
	var s []string
	for _, t := range targets {
		s = append(s, t.String())
	}
	return strings.Join(s, ", ")
}

// Config is what Build builds.
type Config struct {
	Version  string   // the release's version; "" with Snapshot
	Snapshot bool     // a snapshot version, from any tree
	Out      string   // the output directory
	Targets  []Target // nil: every target
	NoPack   bool     // stage the npm packages, do not pack them
	Root     string   // the module root ("": the git work tree around the working directory)
}

// Result is a built release.
type Result struct {
	Version, Commit, Out string
	Files                []File // what checksums.txt lists, by name
}

// File is one released file and its SHA-256.
type File struct{ Name, SHA256 string }

// semver is what npm accepts as a version (and so what a release may be).
var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$`)

// Build builds the release c describes into c.Out, logging each step to log.
func Build(ctx context.Context, c Config, log io.Writer) (*Result, error) {
	if c.Root == "" {
		top, err := output(ctx, "", "git", "rev-parse", "--show-toplevel")
		if err != nil {
			return nil, err
		}
		c.Root = top
	}
	if c.Targets == nil {
		c.Targets = targets
	}
	commit, err := output(ctx, c.Root, "git", "rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	status, err := output(ctx, c.Root, "git", "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return nil, err
	}
	if status != "" {
		if !c.Snapshot {
			return nil, fmt.Errorf("the tree has uncommitted changes; a release is built from a commit:\n%s", status)
		}
		commit += "-dirty"
	}
	epoch, err := sourceDate(ctx, c.Root)
	if err != nil {
		return nil, err
	}
	main, err := readJSON(filepath.Join(c.Root, "npm", "tasksessiond", "package.json"))
	if err != nil {
		return nil, err
	}
	version := strings.TrimPrefix(c.Version, "v")
	if c.Snapshot {
		base, _ := main["version"].(string)
		version = base + "-snapshot.g" + commit[:12]
	}
	if !semver.MatchString(version) {
		return nil, fmt.Errorf("version %q is not a semantic version (npm needs one)", version)
	}
	if err := checkOptional(main); err != nil {
		return nil, err
	}
	if err := clean(c.Out); err != nil {
		return nil, err
	}
	license, _ := main["license"].(string)
	if license == "" {
		return nil, fmt.Errorf("npm/tasksessiond/package.json names no license")
	}
	b := &builder{Config: c, version: version, commit: commit, license: license, mtime: epoch, log: log}
	for _, t := range c.Targets {
		if err := b.target(ctx, t); err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
	}
	if err := b.npmMain(main); err != nil {
		return nil, err
	}
	if err := b.npmOpenCode(); err != nil {
		return nil, err
	}
	if err := b.serverJSON(); err != nil {
		return nil, err
	}
	if !c.NoPack {
		if err := b.pack(ctx); err != nil {
			return nil, err
		}
	}
	files, err := b.checksums()
	if err != nil {
		return nil, err
	}
	return &Result{Version: version, Commit: commit, Out: c.Out, Files: files}, nil
}

type builder struct {
	Config
	version, commit string
	license         string // the SPDX id every package names, the main package's
	mtime           time.Time
	log             io.Writer
	npm             []string // staged npm package directories
}

// sourceDate is the time every archive entry carries: $SOURCE_DATE_EPOCH
// (the reproducible-builds convention), else the commit's.
func sourceDate(ctx context.Context, root string) (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		var err error
		if s, err = output(ctx, root, "git", "log", "-1", "--format=%ct"); err != nil {
			return time.Time{}, err
		}
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("source date %q: %w", s, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// checkOptional holds the main package's optionalDependencies to the
// targets table: a platform missing from either would install no binary.
func checkOptional(main map[string]any) error {
	deps, _ := main["optionalDependencies"].(map[string]any)
	var want []string
	for _, t := range targets {
		want = append(want, t.Package())
	}
	slices.Sort(want)
	got := slices.Sorted(maps.Keys(deps))
	if !slices.Equal(got, want) {
		return fmt.Errorf("npm/tasksessiond/package.json's optionalDependencies %v are not the targets' packages %v", got, want)
	}
	return nil
}

// clean makes out an empty directory; one that exists must hold an
// earlier release (its checksums.txt), so a wrong --out deletes nothing.
func clean(out string) error {
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(out, "checksums.txt")); err != nil {
			return fmt.Errorf("%s is not empty and holds no earlier release (no checksums.txt): remove it or choose another --out", out)
		}
		if err := os.RemoveAll(out); err != nil {
			return err
		}
	}
	return os.MkdirAll(out, 0o755)
}

// target builds t's binary, its archive and its npm package.
func (b *builder) target(ctx context.Context, t Target) error {
	bin := filepath.Join(b.Out, "build", t.GOOS+"_"+t.GOARCH, "tasksessiond")
	fmt.Fprintf(b.log, "tsdrelease: building %s\n", t)
	ldflags := fmt.Sprintf("-s -w -buildid= -X main.version=%s -X main.commit=%s", b.version, b.commit)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, "./cmd/tasksessiond")
	cmd.Dir = b.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.GOOS, "GOARCH="+t.GOARCH, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	ext, err := b.geminiExtension()
	if err != nil {
		return err
	}
	readme, err := os.ReadFile(filepath.Join(b.Root, "README.md"))
	if err != nil {
		return err
	}
	license, err := os.ReadFile(filepath.Join(b.Root, "LICENSE"))
	if err != nil {
		return err
	}
	entries := append([]entry{
		{name: "tasksessiond", mode: 0o755, data: exe},
		{name: "README.md", mode: 0o644, data: readme},
		{name: "LICENSE", mode: 0o644, data: license},
	}, ext...)
	if err := b.writeArchive(filepath.Join(b.Out, t.Archive()), entries); err != nil {
		return err
	}

	// The platform's npm package: its binary, for npm to install on that
	// platform only (os, cpu).
	platform, arch := t.Node()
	dir := filepath.Join(b.Out, "npm", t.Package())
	pkg := map[string]any{
		"name":        t.Package(),
		"version":     b.version,
		"description": fmt.Sprintf("The tasksessiond binary for %s %s (installed by the tasksessiond package).", platform, arch),
		"repository":  repository,
		"license":     b.license,
		"os":          []string{platform},
		"cpu":         []string{arch},
		"files":       []string{"bin/tasksessiond", "LICENSE"},
		// Yarn PnP would run the binary from inside a zip otherwise.
		"preferUnplugged": true,
	}
	if err := writeFile(filepath.Join(dir, "bin", "tasksessiond"), exe, 0o755); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "LICENSE"), license, 0o644); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "package.json"), pkg); err != nil {
		return err
	}
	b.npm = append(b.npm, dir)
	return nil
}

// repository is the npm packages' repository field.
var repository = map[string]any{"type": "git", "url": "git+https://github.com/tasksessiond/tasksessiond.git"}

// geminiExtension is the repository's Gemini CLI extension as an archive
// holds it: its version the release's, and its commands the archive's own
// binary (${extensionPath}) rather than the tasksessiond on PATH, which a
// user installing the extension from its release need not have.
func (b *builder) geminiExtension() ([]entry, error) {
	manifest, err := readJSON(filepath.Join(b.Root, "gemini-extension.json"))
	if err != nil {
		return nil, err
	}
	manifest["version"] = b.version
	const own = `${extensionPath}${/}tasksessiond`
	servers, _ := manifest["mcpServers"].(map[string]any)
	for _, s := range servers {
		if s, ok := s.(map[string]any); ok && s["command"] == "tasksessiond" {
			s["command"] = own
		}
	}
	hooks, err := readJSON(filepath.Join(b.Root, "hooks", "hooks.json"))
	if err != nil {
		return nil, err
	}
	events, _ := hooks["hooks"].(map[string]any)
	for _, defs := range events {
		for _, d := range asList(defs) {
			d, _ := d.(map[string]any)
			for _, h := range asList(d["hooks"]) {
				if h, ok := h.(map[string]any); ok {
					if c, ok := h["command"].(string); ok && strings.HasPrefix(c, "tasksessiond ") {
						h["command"] = `"` + own + `"` + strings.TrimPrefix(c, "tasksessiond")
					}
				}
			}
		}
	}
	m, err := marshal(manifest)
	if err != nil {
		return nil, err
	}
	h, err := marshal(hooks)
	if err != nil {
		return nil, err
	}
	return []entry{
		{name: "gemini-extension.json", mode: 0o644, data: m},
		{name: "hooks/", mode: 0o755, dir: true},
		{name: "hooks/hooks.json", mode: 0o644, data: h},
	}, nil
}

func asList(v any) []any { l, _ := v.([]any); return l }

// npmMain stages the tasksessiond package: npm/tasksessiond as it is in
// the tree, its version and its platform packages' versions the release's.
func (b *builder) npmMain(pkg map[string]any) error {
	src := filepath.Join(b.Root, "npm", "tasksessiond")
	dir := filepath.Join(b.Out, "npm", "tasksessiond")
	pkg["version"] = b.version
	deps := pkg["optionalDependencies"].(map[string]any)
	for name := range deps {
		deps[name] = b.version
	}
	if err := copyTree(src, dir); err != nil {
		return err
	}
	if err := b.copyLicense(dir); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "package.json"), pkg); err != nil {
		return err
	}
	b.npm = append(b.npm, dir)
	return nil
}

// npmOpenCode stages the OpenCode plugin's package: npm/opencode-tasksessiond
// with the plugin itself, contrib/opencode/tasksessiond.ts.
func (b *builder) npmOpenCode() error {
	src := filepath.Join(b.Root, "npm", "opencode-tasksessiond")
	dir := filepath.Join(b.Out, "npm", "opencode-tasksessiond")
	if err := copyTree(src, dir); err != nil {
		return err
	}
	if err := b.copyLicense(dir); err != nil {
		return err
	}
	ts, err := os.ReadFile(filepath.Join(b.Root, "contrib", "opencode", "tasksessiond.ts"))
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "tasksessiond.ts"), ts, 0o644); err != nil {
		return err
	}
	pkg, err := readJSON(filepath.Join(dir, "package.json"))
	if err != nil {
		return err
	}
	pkg["version"] = b.version
	if err := writeJSON(filepath.Join(dir, "package.json"), pkg); err != nil {
		return err
	}
	b.npm = append(b.npm, dir)
	return nil
}

// copyLicense puts the repository's LICENSE in a staged package, where
// npm packs it whatever the package's files list says.
func (b *builder) copyLicense(dir string) error {
	data, err := os.ReadFile(filepath.Join(b.Root, "LICENSE"))
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "LICENSE"), data, 0o644)
}

// serverJSON writes Out/server.json, the MCP registry's description of
// the npm package: the repository's, with the release's version.
func (b *builder) serverJSON() error {
	s, err := readJSON(filepath.Join(b.Root, "server.json"))
	if err != nil {
		return err
	}
	s["version"] = b.version
	for _, p := range asList(s["packages"]) {
		if p, ok := p.(map[string]any); ok {
			p["version"] = b.version
		}
	}
	return writeJSON(filepath.Join(b.Out, "server.json"), s)
}

// pack runs npm pack on each staged package, into Out/npm.
func (b *builder) pack(ctx context.Context) error {
	dest, err := filepath.Abs(filepath.Join(b.Out, "npm"))
	if err != nil {
		return err
	}
	for _, dir := range b.npm {
		fmt.Fprintf(b.log, "tsdrelease: npm pack %s\n", filepath.Base(dir))
		cmd := exec.CommandContext(ctx, "npm", "pack", "--pack-destination", dest, "--loglevel=error", "--ignore-scripts")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("npm pack %s: %v\n%s", dir, err, out)
		}
	}
	return nil
}

// checksums writes Out/checksums.txt, "<sha256>  <name>" a line (as
// sha256sum prints and checks it), for the archives and the npm tarballs.
func (b *builder) checksums() ([]File, error) {
	var names []string
	for _, pattern := range []string{"*.tar.gz", "npm/*.tgz"} {
		m, err := filepath.Glob(filepath.Join(b.Out, pattern))
		if err != nil {
			return nil, err
		}
		for _, p := range m {
			rel, _ := filepath.Rel(b.Out, p)
			names = append(names, filepath.ToSlash(rel))
		}
	}
	slices.Sort(names)
	var files []File
	var text strings.Builder
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(b.Out, n))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		f := File{Name: n, SHA256: hex.EncodeToString(sum[:])}
		files = append(files, f)
		fmt.Fprintf(&text, "%s  %s\n", f.SHA256, f.Name)
	}
	return files, os.WriteFile(filepath.Join(b.Out, "checksums.txt"), []byte(text.String()), 0o644)
}

// entry is one file of an archive.
type entry struct {
	name string
	mode int64
	data []byte
	dir  bool
}

// writeArchive writes a .tar.gz whose bytes depend on the entries alone:
// the order given, no owner, the source date, no gzip name or time.
func (b *builder) writeArchive(path string, entries []entry) error {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.data)), ModTime: b.mtime, Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if e.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("%s: %s: %w", path, e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func output(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

func readJSON(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// marshal is indented JSON with a final newline (map keys sorted: the
// same value gives the same bytes).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return buf.Bytes(), err
}

func writeJSON(path string, v any) error {
	data, err := marshal(v)
	if err != nil {
		return err
	}
	return writeFile(path, data, 0o644)
}

func writeFile(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, mode)
}

// copyTree copies the regular files under src into dst, keeping their
// executable bit.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if info.Mode()&0o111 != 0 {
			mode = 0o755
		}
		return writeFile(filepath.Join(dst, rel), data, mode)
	})
}
