package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// NPM is tasksessiond as a user with Node and no Go gets it: the
// snapshot release of this tree (cmd/tsdrelease, this platform only),
// its npm tarballs installed with "npm install -g" into an empty prefix,
// offline, from an empty cache.
type NPM struct {
	Prefix  string // the npm prefix (--prefix)
	Bin     string // Prefix/bin: tasksessiond, as npm linked it
	Version string // the version the release stamped
}

type releaseDir struct {
	once           sync.Once
	dir            string
	version        string
	platform, main string // the tarballs
	opencode       string
	archive        string // this platform's archive
	err            error
}

var release releaseDir

// EnvRelease names a release directory (go run ./cmd/tsdrelease's --out)
// to use instead of building one: CI builds its snapshot once, first.
const EnvRelease = "TASKSESSIOND_E2E_RELEASE"

// NPMRelease builds the snapshot release for this platform, once per test
// binary (Main removes it), unless $TASKSESSIOND_E2E_RELEASE names one,
// and returns its npm tarballs: the platform's package, tasksessiond, and
// the OpenCode plugin; and the version.
func NPMRelease(tb testing.TB) (platform, main, opencode, version string) {
	tb.Helper()
	if !Required() {
		// only the end-to-end tests use a release: `go test ./...` need
		// not build one to skip them
		tb.Skipf("the release is built for the end-to-end tests, which run with %s=1", EnvE2E)
	}
	release.once.Do(func() {
		if _, err := exec.LookPath("npm"); err != nil {
			release.err = fmt.Errorf("npm is not on PATH")
			return
		}
		if dir := os.Getenv(EnvRelease); dir != "" {
			var pkg struct{ Version string }
			b, err := os.ReadFile(filepath.Join(dir, "npm", "tasksessiond", "package.json"))
			if err == nil {
				err = json.Unmarshal(b, &pkg)
			}
			if err != nil {
				release.err = fmt.Errorf("%s=%s: not a release directory: %v", EnvRelease, dir, err)
				return
			}
			release.version = pkg.Version
			release.err = release.locate(dir)
			return
		}
		root, err := RepoRoot()
		if err != nil {
			release.err = err
			return
		}
		if release.dir, release.err = os.MkdirTemp("", "tsdrelease"); release.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		start := time.Now()
		cmd := exec.CommandContext(ctx, "go", "run", "./cmd/tsdrelease", "--snapshot", "--only", "host", "--out", release.dir)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			release.err = fmt.Errorf("go run ./cmd/tsdrelease --snapshot: %v\n%s%s", err, out, stderrOf(err))
			return
		}
		// "tasksessiond VERSION (commit C) in DIR:"
		if f := strings.Fields(string(out)); len(f) > 1 {
			release.version = f[1]
		}
		tb.Logf("harness: built the snapshot release %s in %v", release.version, time.Since(start).Round(time.Second))
		release.err = release.locate(release.dir)
	})
	if release.err != nil {
		tb.Fatal(release.err)
	}
	return release.platform, release.main, release.opencode, release.version
}

// locate finds this platform's files in the release directory dir.
func (r *releaseDir) locate(dir string) error {
	arch := runtime.GOARCH
	if arch == "amd64" {
		arch = "x64"
	}
	npm := filepath.Join(dir, "npm")
	r.platform = filepath.Join(npm, fmt.Sprintf("tasksessiond-%s-%s-%s.tgz", runtime.GOOS, arch, r.version))
	r.main = filepath.Join(npm, "tasksessiond-"+r.version+".tgz")
	r.opencode = filepath.Join(npm, "opencode-tasksessiond-"+r.version+".tgz")
	r.archive = filepath.Join(dir, fmt.Sprintf("%s.%s.tasksessiond.tar.gz", runtime.GOOS, arch))
	for _, p := range []string{r.platform, r.main, r.opencode, r.archive} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("the release has no %s: %v", filepath.Base(p), err)
		}
	}
	return nil
}

// ReleaseArchive returns this platform's archive of the snapshot release
// (see NPMRelease): {platform}.{arch}.tasksessiond.tar.gz.
func ReleaseArchive(tb testing.TB) string {
	tb.Helper()
	NPMRelease(tb)
	return release.archive
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// InstallNPM installs the release's tasksessiond into a new empty prefix
// as a user would ("npm install -g tasksessiond"), but from its tarballs
// (the platform's package and the main one: npm would fetch the first as
// the second's optional dependency) and with no network: --offline, an
// empty cache, and a registry that does not answer. The package has no
// install script: its launcher puts the binary in its place on its first
// run.
func InstallNPM(tb testing.TB) *NPM {
	tb.Helper()
	platform, main, _, version := NPMRelease(tb)
	dir := tb.TempDir()
	n := &NPM{Prefix: filepath.Join(dir, "prefix"), Version: version}
	n.Bin = filepath.Join(n.Prefix, "bin")
	cmd := exec.Command("npm", "install", "-g", "--prefix", n.Prefix, "--offline", "--cache", filepath.Join(dir, "cache"),
		"--registry", "http://127.0.0.1:9/", "--no-audit", "--no-fund", "--loglevel=error", platform, main)
	cmd.Env = []string{"HOME=" + filepath.Join(dir, "home"), "PATH=" + os.Getenv("PATH")}
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("npm install -g --offline %s %s: %v\n%s", filepath.Base(platform), filepath.Base(main), err, out)
	}
	return n
}

// NoGoPath is a PATH for a user with Node and no Go: first dirs, then the
// directory of node (and npm), then /usr/bin and /bin. It fails the test
// if a go command is on it.
func NoGoPath(tb testing.TB, first ...string) string {
	tb.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		tb.Fatal("node is not on PATH")
	}
	node, _ = filepath.EvalSymlinks(node)
	dirs := append(append([]string(nil), first...), filepath.Dir(node), "/usr/bin", "/bin")
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "go")); err == nil {
			tb.Fatalf("harness: go is in %s, on the PATH of a user without Go", d)
		}
	}
	return strings.Join(dirs, string(os.PathListSeparator))
}

// NewUser is a user with Node and no Go who follows the README: it fails
// the test unless each of lines is still in README.md (the test changes
// with them), installs the release with npm (InstallNPM), and returns it
// with such a user's PATH (NoGoPath) and npm's tasksessiond command.
func NewUser(tb testing.TB, lines ...string) (npm *NPM, path, tsd string) {
	tb.Helper()
	root, err := RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range lines {
		if !strings.Contains(string(readme), line) {
			tb.Fatalf("the README's install lines changed (%q is gone): change this test with them", line)
		}
	}
	npm = InstallNPM(tb)
	path = NoGoPath(tb, npm.Bin)
	if tsd, err = exec.LookPath(filepath.Join(npm.Bin, "tasksessiond")); err != nil {
		tb.Fatalf("npm linked no tasksessiond command: %v", err)
	}
	return npm, path, tsd
}
