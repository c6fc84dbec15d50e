package main_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestBoardCommand(t *testing.T) {
	// Ensures `tasksessiond board` connects to the daemon, prints a URL
	// whose token opens the page and its data, refuses a request without
	// it, and stops with 0 on an interrupt.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	s, err := d.Dial(t).CreateSession(context.Background(), wire.CreateSession{Title: "On the board"})
	require.NoError(t, err)

	cmd := exec.Command(binary, "board", "--socket", d.Socket, "--no-autostart")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
		io.Copy(io.Discard, out)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(30 * time.Second):
		t.Fatalf("no URL printed; stderr: %s", stderr.String())
	}
	i := strings.Index(line, "http://127.0.0.1:")
	require.GreaterOrEqual(t, i, 0, line)
	url := strings.TrimSpace(line[i:])
	require.Contains(t, url, "/?token=")

	get := func(u string) (int, string) {
		res, err := http.Get(u)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(body)
	}
	code, body := get(url)
	assert.Equal(t, 200, code)
	assert.Contains(t, body, "<h1>tasksessiond board</h1>")
	base, token, _ := strings.Cut(url, "/?token=")
	code, body = get(base + "/api/board?token=" + token + "&id=" + s.ID)
	assert.Equal(t, 200, code)
	assert.Contains(t, body, `"title":"On the board"`)
	code, _ = get(base + "/api/board?id=" + s.ID)
	assert.Equal(t, 403, code, "no token")

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		assert.NoError(t, err, "exit 0 on an interrupt; stderr: %s", stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("board did not stop on an interrupt")
	}
}

func TestBoardCommandErrors(t *testing.T) {
	// Ensures the board refuses to serve beyond loopback, says so when no
	// daemon answers (autostart off), and rejects stray arguments.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"NotLoopback", []string{"board", "--socket", d.Socket, "--addr", "0.0.0.0:0"}, 1, "loopback"},
		{"NoDaemon", []string{"board", "--socket", filepath.Join(t.TempDir(), "none.sock"), "--no-autostart"}, 1, "is the daemon running"},
		{"StrayArgument", []string{"board", "--socket", d.Socket, "extra"}, 2, "takes no arguments"},
		{"Help", []string{"board", "--help"}, 0, "Usage: tasksessiond board"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(binary, c.args...)
			out, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, c.code, code, string(out))
			assert.Contains(t, string(out), c.want)
		})
	}
}
