package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// Host is what every host's harness holds, embedded in each host
// package's Host: the host CLI's binary, the tasksessiond binary, a
// scripted model API, a daemon, and a temp dir with the host's HOME and
// project. A host package adds only what is its own: its config files,
// its environment variables, its flags and how it reports a run.
type Host struct {
	Bin     string // the host CLI's binary
	TSD     string // the tasksessiond binary
	API     *modelapi.Server
	Daemon  *Daemon
	Root    string // the temp dir holding all below (Root/bin: the harness's wrappers)
	Home    string // HOME
	Project string // the working directory of every run

	// Term is TERM in Env (default dumb).
	Term string
	// Path holds directories put before $PATH in Env.
	Path []string
	// Vars are the host's own variables in Env, after the harness's.
	Vars []string
	// ExtraEnv is added to Env last (a test's own variables).
	ExtraEnv []string
	// Rec records the hook runs and MCP server starts (see Record); nil
	// for a host without them.
	Rec *Recorder

	tb        testing.TB
	noisy     bool
	mu        sync.Mutex
	runs      []string
	quiet     []func(testing.TB)
	atFailure []func(testing.TB)
}

// HostSetup is what NewHost needs of a host.
type HostSetup struct {
	CLI   CLI             // the pinned CLI (see RequireHost)
	Model modelapi.Config // the scripted model: Respond, and the host's Classify and Default
	// Daemon is a daemon to share (with another host's harness); by
	// default the Host makes its own.
	Daemon *Daemon
	// NoDaemon leaves the Host's own daemon down (Start it later with
	// h.Daemon.Start).
	NoDaemon bool
	// Noisy skips the quiet checks (see Quiet): by default a test whose
	// bridge, hook or plugin said something is wrong fails.
	Noisy bool
}

// NewHost finds the host's binary (skipping the test, or failing it under
// TASKSESSIOND_E2E=1, when it is not installed), builds tasksessiond,
// starts the scripted model API and, unless s.Daemon or s.NoDaemon, a
// daemon, and makes Root, Home, Project and Root/bin. At the end of a test
// that did not fail it runs the quiet checks; at the end of one that
// failed it logs the runs of the CLI, what AtFailure added, the hook runs
// and MCP server starts, and the model requests.
func NewHost(tb testing.TB, s HostSetup) *Host {
	tb.Helper()
	h := &Host{Bin: RequireHost(tb, s.CLI), TSD: Binary(tb), Term: "dumb", tb: tb, noisy: s.Noisy}
	h.API = modelapi.New(tb, s.Model)
	if s.Daemon != nil {
		h.Daemon = s.Daemon
	} else {
		h.Daemon = NewDaemon(tb)
		if !s.NoDaemon {
			h.Daemon.Start(tb)
		}
	}
	h.Root = tb.TempDir()
	h.Home = filepath.Join(h.Root, "home")
	h.Project = filepath.Join(h.Root, "project")
	h.Mkdir(h.Home, h.Project, filepath.Join(h.Root, "bin"))
	tb.Cleanup(func() {
		if !tb.Failed() && !h.noisy {
			for _, f := range h.quiet {
				f(tb)
			}
		}
		if !tb.Failed() {
			return
		}
		h.mu.Lock()
		runs := strings.Join(h.runs, "\n")
		h.mu.Unlock()
		tb.Logf("%s runs:\n%s", h.Name(), runs)
		for _, f := range h.atFailure {
			f(tb)
		}
		if h.Rec != nil {
			tb.Logf("hook runs:\n%s", h.Rec.Dump())
		}
		tb.Logf("model requests:\n%s", h.API.Dump())
	})
	return h
}

// Name is the CLI's command name (its binary's base name), for logs.
func (h *Host) Name() string { return filepath.Base(h.Bin) }

// TB is the test the Host was made for.
func (h *Host) TB() testing.TB { return h.tb }

// Quiet adds a check run at the end of a test that has not failed (unless
// the setup was Noisy): it fails the test if a program that must be
// silent unless something is wrong said something.
func (h *Host) Quiet(check func(tb testing.TB)) { h.quiet = append(h.quiet, check) }

// AtFailure adds what to log when the test fails (a host's own logs).
func (h *Host) AtFailure(log func(tb testing.TB)) { h.atFailure = append(h.atFailure, log) }

// Mkdir makes directories (and their parents), failing the test if it cannot.
func (h *Host) Mkdir(dirs ...string) {
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			h.tb.Fatal(err)
		}
	}
}

// WriteJSON writes v, indented, to path (0600), failing the test if it cannot.
func (h *Host) WriteJSON(path string, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		h.tb.Fatal(err)
	}
	h.WriteFile(path, string(b), 0o600)
}

// WriteFile writes text to path, failing the test if it cannot.
func (h *Host) WriteFile(path, text string, perm os.FileMode) {
	if err := os.WriteFile(path, []byte(text), perm); err != nil {
		h.tb.Fatal(err)
	}
}

// Env is the environment of every run of the host: only what the harness
// sets, so the user's configuration and credentials never leak in (nor
// the runner's: CI=true changes how some hosts behave). It is HOME, PATH
// (Path first), TERM (Term), LANG, TMPDIR, then the host's Vars, then
// ExtraEnv.
func (h *Host) Env() []string {
	path := os.Getenv("PATH")
	if len(h.Path) > 0 {
		path = strings.Join(h.Path, string(os.PathListSeparator)) + string(os.PathListSeparator) + path
	}
	env := []string{
		"HOME=" + h.Home,
		"PATH=" + path,
		"TERM=" + h.Term,
		"LANG=C.UTF-8",
		"TMPDIR=" + os.TempDir(),
	}
	env = append(env, h.Vars...)
	return append(env, h.ExtraEnv...)
}

// UseDefaultPaths has the host's runs use tasksessiond's default socket
// and database, as a user who sets neither variable has them, but out of
// the machine's way: no TASKSESSIOND_SOCKET or TASKSESSIOND_DB in Vars,
// TMPDIR (in ExtraEnv; XDG_RUNTIME_DIR is never in Env) the Daemon's dir,
// which holds the default socket then, and HOME the database. The Daemon
// is pointed at both, so that Subjects, Status and its cleanup (which
// stops a daemon a bridge or hook started) reach the daemon there. A host
// that does not pass TMPDIR to its MCP server would have the bridge use
// the machine's default socket: a test that finds its tasks through the
// Daemon shows it did not.
func (h *Host) UseDefaultPaths() {
	var vars []string
	for _, v := range h.Vars {
		if !strings.HasPrefix(v, "TASKSESSIOND_SOCKET=") && !strings.HasPrefix(v, "TASKSESSIOND_DB=") {
			vars = append(vars, v)
		}
	}
	h.Vars = vars
	h.ExtraEnv = append(h.ExtraEnv, "TMPDIR="+h.Daemon.Dir)
	h.Daemon.Socket = filepath.Join(h.Daemon.Dir, fmt.Sprintf("tasksessiond-%d", os.Getuid()), "tasksessiond.sock")
	h.Daemon.DB = filepath.Join(h.Home, ".local", "state", "tasksessiond", "tasksessiond.db")
}

// Output is one run of the host's CLI.
type Output struct {
	Args           []string
	Stdout, Stderr string
	Err            error
}

// Command runs the host's CLI with args in Project, with Env, and returns
// what it printed and how it exited (it fails the test only when the CLI
// cannot be started). It is killed after timeout. Each run is logged (its
// command line, result and time), and its output kept for the log of a
// failing test.
func (h *Host) Command(tb testing.TB, timeout time.Duration, args ...string) Output {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Bin, args...)
	cmd.Dir, cmd.Env = h.Project, h.Env()
	// A child that keeps the output pipes open (a daemon a bridge or
	// plugin started, detached) does not hold the run up.
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	out := Output{Args: args, Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
	result := any("ok")
	if err != nil {
		result = err
	}
	line := fmt.Sprintf("%s %s: %v in %v", h.Name(), strings.Join(quoteArgs(args), " "), result, time.Since(start).Round(time.Millisecond))
	tb.Log(line)
	h.mu.Lock()
	h.runs = append(h.runs, line+"\nstdout:\n"+Tail(out.Stdout, 60)+"\nstderr:\n"+Tail(out.Stderr, 60))
	h.mu.Unlock()
	return out
}

// StartTerm starts the host's CLI with args in a 120×40 terminal (tmux),
// in Project, with Env but TERM=xterm-256color, and waits up to timeout
// for ready to hold for the screen (its prompt).
func (h *Host) StartTerm(tb testing.TB, timeout time.Duration, ready func(screen string) bool, args ...string) *Term {
	tb.Helper()
	var env []string
	for _, e := range h.Env() {
		if !strings.HasPrefix(e, "TERM=") {
			env = append(env, e)
		}
	}
	env = append(env, "TERM=xterm-256color")
	t := NewTerm(tb, h.Project, env, 120, 40, append([]string{h.Bin}, args...)...)
	t.WaitFor(timeout, "the prompt", ready)
	return t
}

// JSONLines returns the lines of s that are JSON objects, in order (a
// CLI's JSONL events; other lines are passed over).
func JSONLines(s string) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) > 0 && line[0] == '{' && json.Valid(line) {
			out = append(out, append([]byte(nil), line...))
		}
	}
	return out
}

// Tail returns the last n lines of s, saying how many it left out.
func Tail(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = append([]string{fmt.Sprintf("... (%d lines before)", len(l)-n)}, l[len(l)-n:]...)
	}
	return strings.Join(l, "\n")
}

// ShellQuote quotes s for sh.
func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \"'") {
			a = strconv.Quote(a)
		}
		out[i] = a
	}
	return out
}
