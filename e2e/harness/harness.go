// Package harness holds what every host's end-to-end tests share: the
// tasksessiond binary, built once per test run; a daemon on a temp socket
// and database; the gate that skips a test whose host is not installed
// (or fails it, in CI); the Host every host's harness embeds (its dirs,
// environment, runs, failure log); the Recorder of hook runs and MCP
// server starts; and a terminal driver for interactive hosts.
package harness

import (
	"context"
	"flag"
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

// EnvE2E set to 1 runs the end-to-end tests (they are skipped without it),
// and makes a host that cannot be installed a failure, not a skip.
const EnvE2E = "TASKSESSIOND_E2E"

// EnvCache overrides the cache e2e/install-hosts.sh installs hosts into.
const EnvCache = "TASKSESSIOND_E2E_CACHE"

// Required reports whether the end-to-end tests must run (TASKSESSIOND_E2E=1).
func Required() bool { return os.Getenv(EnvE2E) == "1" }

// CacheDir is where e2e/install-hosts.sh installs hosts.
func CacheDir() string {
	if d := os.Getenv(EnvCache); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "tasksessiond-e2e")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "tasksessiond-e2e")
}

// CLI names a pinned host CLI for RequireHost.
type CLI struct {
	Name    string // for messages, e.g. "Claude Code"
	Install string // its name for e2e/install-hosts.sh, e.g. "claude-code"
	Version string // the pinned release, e.g. "2.1.328"
	Bin     string // its command, e.g. "claude"
	Env     string // the variable naming a binary to use instead
}

// String names the CLI and its version, for messages.
func (c CLI) String() string { return c.Name + " " + c.Version }

// Path is where install-hosts.sh puts the CLI's binary:
// <cache>/<install>-<version>/node_modules/.bin/<bin>.
func (c CLI) Path() string {
	return filepath.Join(CacheDir(), c.Install+"-"+c.Version, "node_modules", ".bin", c.Bin)
}

// RequireHost returns the path of a host's binary: $Env when set, else
// Path, which it installs first (e2e/install-hosts.sh, once per test
// binary and host) when it is missing. When the binary is still missing it
// skips the test, or fails it when TASKSESSIOND_E2E=1, saying why.
func RequireHost(tb testing.TB, h CLI) string {
	tb.Helper()
	if !Required() {
		// Opt-in: they drive real host CLIs (installed from npm on first
		// use) and take minutes; `go test ./...` stays quick without them.
		tb.Skipf("the %s end-to-end test runs with %s=1 (it installs the pinned CLI from npm on first use)", h, EnvE2E)
	}
	path := h.Path()
	if p := os.Getenv(h.Env); p != "" {
		path = p
	} else if _, err := os.Stat(path); err != nil {
		if err := install(tb, h.Install); err != nil {
			missing(tb, fmt.Sprintf("%s is not installed and e2e/install-hosts.sh %s failed: %v", h, h.Install, err), h.Env)
		}
	}
	if _, err := os.Stat(path); err != nil {
		missing(tb, fmt.Sprintf("%s is not installed (%v)", h, err), h.Env)
	}
	return path
}

func missing(tb testing.TB, msg, env string) {
	tb.Helper()
	msg += fmt.Sprintf(": run e2e/install-hosts.sh (it needs npm), or set %s to its binary", env)
	if Required() {
		tb.Fatalf("%s (%s=1: the end-to-end tests must run)", msg, EnvE2E)
	}
	tb.Skip(msg)
}

var installs struct {
	mu   sync.Mutex
	done map[string]error
}

// install runs e2e/install-hosts.sh for one host, once per test binary
// (tests in parallel wait for the first one's run).
func install(tb testing.TB, host string) error {
	installs.mu.Lock()
	defer installs.mu.Unlock()
	if err, ok := installs.done[host]; ok {
		return err
	}
	err := func() error {
		if _, err := exec.LookPath("npm"); err != nil {
			return fmt.Errorf("npm is not on PATH")
		}
		root, err := RepoRoot()
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		start := time.Now()
		cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "e2e", "install-hosts.sh"), host)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v\n%s", err, out)
		}
		tb.Logf("harness: installed %s in %v: %s", host, time.Since(start).Round(time.Second), strings.TrimSpace(string(out)))
		return nil
	}()
	if installs.done == nil {
		installs.done = map[string]error{}
	}
	installs.done[host] = err
	return err
}

// RepoRoot returns the module's root directory: from this file's path
// when the build kept it, else from "go env GOMOD".
func RepoRoot() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		root := filepath.Join(filepath.Dir(file), "..", "..")
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return root, nil
		}
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("find the module root: go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("find the module root: not inside the module (go env GOMOD is %q)", gomod)
	}
	return filepath.Dir(gomod), nil
}

var build struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// EnvBinary names a prebuilt tasksessiond binary to use instead of
// building one.
const EnvBinary = "TASKSESSIOND_E2E_BIN"

// Binary returns the tasksessiond binary: $TASKSESSIOND_E2E_BIN, else one
// built (once per test binary) from this module into a temp dir that Main
// removes.
func Binary(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv(EnvBinary); p != "" {
		return p
	}
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "tsdbin")
		if build.err != nil {
			return
		}
		var root string
		if root, build.err = RepoRoot(); build.err != nil {
			return
		}
		build.bin = filepath.Join(build.dir, "tasksessiond")
		cmd := exec.Command("go", "build", "-o", build.bin, "./cmd/tasksessiond")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build ./cmd/tasksessiond: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		tb.Fatal(build.err)
	}
	return build.bin
}

// Parallel is how many end-to-end tests run at once unless -parallel says
// otherwise: they mostly wait on a host process and the scripted model, so
// more than GOMAXPROCS (-parallel's default) of them fit on a small machine.
const Parallel = 6

// Main runs a test binary's tests and removes what they share (the built
// tasksessiond). Use it as: func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
func Main(m *testing.M) int {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && flag.Lookup("test.parallel") != nil {
		flag.Set("test.parallel", fmt.Sprint(Parallel))
	}
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	if release.dir != "" {
		os.RemoveAll(release.dir)
	}
	return code
}
