// Package harness holds what every host's end-to-end tests share: the
// tasksessiond binary, built once per test run; a daemon on a temp socket
// and database; the gate that skips a test whose host is not installed
// (or fails it, in CI); and a terminal driver for interactive hosts.
package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// EnvE2E set to 1 (CI) turns a missing host from a skip into a failure.
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

// RequireHost returns the path of a host's binary: the environment
// variable env when set, else path. When the binary is missing it skips the
// test, or fails it when TASKSESSIOND_E2E=1, saying how to install it.
func RequireHost(tb testing.TB, name, env, path string) string {
	tb.Helper()
	if p := os.Getenv(env); p != "" {
		path = p
	}
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("%s is not installed (%v): run e2e/install-hosts.sh, or set %s to its binary", name, err, env)
		if Required() {
			tb.Fatalf("%s (%s=1: the end-to-end tests must run)", msg, EnvE2E)
		}
		tb.Skip(msg)
	}
	if testing.Short() && !Required() {
		tb.Skipf("-short: skipping the %s end-to-end test", name)
	}
	return path
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
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
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

// Main runs a test binary's tests and removes what they share (the built
// tasksessiond). Use it as: func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	return code
}
