package harness

import (
	"os/exec"
	"strings"
	"testing"
)

// Setup sets the host up as a user does, with "tasksessiond setup NAME"
// (in the host's Env, so that it finds the host's config dirs), the
// recording wrapper as the command (when the Host records) and the Host's
// daemon; args are more of setup's flags. It fails the test unless setup
// succeeds, and returns what it printed.
func (h *Host) Setup(tb testing.TB, name string, args ...string) string {
	tb.Helper()
	all := []string{"setup", name, "--socket", h.Daemon.Socket, "--db", h.Daemon.DB}
	if h.Rec != nil {
		all = append(all, "--bin", h.Rec.Bin)
	}
	out, err := h.RunTSD(all, args...)
	if err != nil {
		tb.Fatalf("tasksessiond %s: %v\n%s", strings.Join(append(all, args...), " "), err, out)
	}
	return out
}

// RunTSD runs tasksessiond with args in Project, with the Host's Env, and
// returns its combined output.
func (h *Host) RunTSD(args []string, more ...string) (string, error) {
	cmd := exec.Command(h.TSD, append(args, more...)...)
	cmd.Dir, cmd.Env = h.Project, h.Env()
	out, err := cmd.CombinedOutput()
	return string(out), err
}
