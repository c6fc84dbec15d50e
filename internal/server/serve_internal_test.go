package server

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/session"
)

// logBuffer is a log a test reads while the server writes it (testutil has
// one, but testutil imports this package).
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startServer(t *testing.T, logs *logBuffer, adjust func(*Server)) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tsdi")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	d, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "i.db"), db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	sock := filepath.Join(dir, "d.sock")
	s := New(session.NewManager(d, nil), Config{Socket: sock, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, s.Listen())
	adjust(s)
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	t.Cleanup(func() {
		s.Shutdown(context.Background())
		assert.NoError(t, <-done)
	})
	return sock
}

func roundTrip(t *testing.T, sock string) string {
	t.Helper()
	nc, err := net.Dial("unix", sock)
	require.NoError(t, err)
	defer nc.Close()
	_, err = nc.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"daemon/status"}` + "\n"))
	require.NoError(t, err)
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(nc).ReadString('\n')
	require.NoError(t, err)
	return line
}

func TestPeerCredentialsFailClosed(t *testing.T) {
	// Ensures a connection whose user cannot be looked up is refused with
	// a JSON-RPC error, not served.
	var logs logBuffer
	sock := startServer(t, &logs, func(s *Server) {
		s.peerUID = func(*net.UnixConn) (int, error) { return -1, errors.New("lookup failed") }
	})
	nc, err := net.Dial("unix", sock)
	require.NoError(t, err)
	defer nc.Close()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(nc).ReadString('\n') // refused at once, before it sends anything
	require.NoError(t, err)
	assert.Contains(t, line, `"code":-32600`)
	assert.Contains(t, line, "could not tell which user is connecting (lookup failed)")
	assert.Contains(t, logs.String(), "peer credentials unavailable")
}

func TestAcceptErrorsKeepServing(t *testing.T) {
	// Ensures running out of file descriptors on accept is logged and
	// retried with a pause, and the daemon goes on serving.
	var logs logBuffer
	var failures atomic.Int32
	sock := startServer(t, &logs, func(s *Server) {
		accept := s.accept
		s.accept = func() (*net.UnixConn, error) {
			if failures.Add(1) <= 3 {
				return nil, &net.OpError{Op: "accept", Net: "unix", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
			}
			return accept()
		}
	})
	assert.Contains(t, roundTrip(t, sock), `"result"`)
	assert.Equal(t, 3, strings.Count(logs.String(), "accept failed; retrying"))
	assert.Contains(t, logs.String(), "too many open files")
}
