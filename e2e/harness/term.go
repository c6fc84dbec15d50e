package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Term drives an interactive program in a detached tmux session on a tmux
// server of its own (its socket in a temp dir), so tests never touch the
// user's tmux and run in parallel.
type Term struct {
	tb     testing.TB
	socket string
	pid    int // the program's
}

// NewTerm starts argv in a width×height terminal, in dir, with env as its
// environment (and PATH). The program and its tmux server are killed at the
// end of the test; on failure the screen is logged.
func NewTerm(tb testing.TB, dir string, env []string, width, height int, argv ...string) *Term {
	tb.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		tb.Skip("tmux is not installed: the interactive tests need it")
	}
	sockDir, err := os.MkdirTemp("", "tsdtmux")
	if err != nil {
		tb.Fatal(err)
	}
	t := &Term{tb: tb, socket: filepath.Join(sockDir, "s")}
	args := []string{"new-session", "-d", "-s", "e2e", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), "-c", dir}
	var path []string
	for _, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			// tmux gives a new session the client's PATH whatever -e
			// says: env sets it (and execs the program, keeping its pid).
			path = []string{"env", e}
			continue
		}
		args = append(args, "-e", e)
	}
	args = append(append(args, path...), argv...)
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("terminal at failure:\n%s", t.Capture())
		}
		t.tmux("kill-server")
		t.waitExit()
		os.RemoveAll(sockDir)
	})
	if out, err := t.tmux(args...); err != nil {
		tb.Fatalf("harness: tmux new-session: %v\n%s", err, out)
	}
	if out, err := t.tmux("display-message", "-p", "-t", "e2e", "#{pane_pid}"); err == nil {
		t.pid, _ = strconv.Atoi(strings.TrimSpace(out))
	}
	// Keep the pane after the program exits, so its last screen can be read.
	t.tmux("set-option", "-t", "e2e", "remain-on-exit", "on")
	return t
}

func (t *Term) tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-S", t.socket}, args...)...)
	// The tmux server, started by the first command, passes its environment
	// to the program: only PATH, so the program sees what the test gave it
	// and nothing of the runner's (CI=true turns Gemini CLI headless).
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TMUX="}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// waitExit waits for the program to exit after tmux hung up on it (so the
// test's temp dirs are not removed under it), and kills it after 5s.
func (t *Term) waitExit() {
	if t.pid <= 0 {
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(t.pid) {
		if time.Now().After(deadline) {
			syscall.Kill(t.pid, syscall.SIGKILL)
			deadline = time.Now().Add(5 * time.Second)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid is a live process (a zombie is not: once tmux
// is gone nobody may reap it).
func alive(pid int) bool {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// pid (comm) state ...: the state follows the last ')'.
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
			return s[i+2] != 'Z'
		}
		return true
	} else if _, statErr := os.Stat("/proc/self/stat"); statErr == nil {
		return false // a /proc without this pid
	}
	return syscall.Kill(pid, 0) == nil
}

// Type types text literally (no key names), without Enter.
func (t *Term) Type(text string) {
	t.tb.Helper()
	if out, err := t.tmux("send-keys", "-t", "e2e", "-l", text); err != nil {
		t.tb.Fatalf("harness: tmux send-keys: %v\n%s", err, out)
	}
}

// Keys sends tmux key names: "Enter", "Escape", "C-c", "Down", ...
func (t *Term) Keys(keys ...string) {
	t.tb.Helper()
	if out, err := t.tmux(append([]string{"send-keys", "-t", "e2e"}, keys...)...); err != nil {
		t.tb.Fatalf("harness: tmux send-keys: %v\n%s", err, out)
	}
}

// Submit types a line and presses Enter.
func (t *Term) Submit(line string) {
	t.tb.Helper()
	t.Type(line)
	// Enter once the TUI shows the text: one that reads a fast paste as a
	// chunk takes an Enter sent with it as part of the paste.
	t.WaitForText(10*time.Second, line)
	t.Keys("Enter")
}

// Capture returns the visible screen, as text.
func (t *Term) Capture() string {
	out, err := t.tmux("capture-pane", "-p", "-t", "e2e")
	if err != nil {
		return fmt.Sprintf("(capture-pane: %v: %s)", err, out)
	}
	return out
}

// Dead reports whether the program has exited.
func (t *Term) Dead() bool {
	out, err := t.tmux("display-message", "-p", "-t", "e2e", "#{pane_dead}")
	return err != nil || strings.TrimSpace(out) == "1"
}

// WaitFor polls the screen until cond holds, or fails the test after timeout.
func (t *Term) WaitFor(timeout time.Duration, what string, cond func(screen string) bool) string {
	t.tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		screen := t.Capture()
		if cond(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			t.tb.Fatalf("harness: timed out after %v waiting for %s; the screen:\n%s", timeout, what, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// WaitForText waits until the screen shows s.
func (t *Term) WaitForText(timeout time.Duration, s string) string {
	t.tb.Helper()
	return t.WaitFor(timeout, fmt.Sprintf("%q on the screen", s), func(screen string) bool { return strings.Contains(screen, s) })
}

// SubmitUntil types line into the prompt until the screen shows it as
// shown (text typed while the CLI redraws, after /clear, may be lost: it
// is typed again), then presses Enter until done holds (a CLI takes a
// quick Enter after typed text as part of a paste).
func (t *Term) SubmitUntil(line, shown string, done func() bool) {
	t.tb.Helper()
	typed := false
	for range 5 {
		t.Type(line)
		deadline := time.Now().Add(3 * time.Second)
		for !typed && time.Now().Before(deadline) {
			typed = strings.Contains(t.Capture(), shown)
			time.Sleep(50 * time.Millisecond)
		}
		if typed {
			break
		}
		t.Keys("C-u") // whatever half of it arrived
	}
	if !typed {
		t.tb.Fatalf("typing %q: the prompt does not show it:\n%s", line, t.Capture())
	}
	for range 10 {
		t.Keys("Enter")
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			if done() {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.tb.Fatalf("submitting %q: nothing happened after 10 Enters:\n%s", line, t.Capture())
}
