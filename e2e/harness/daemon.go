package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/wire"
)

// Daemon is a tasksessiond daemon on a temp socket and database. NewDaemon
// only picks the paths: Start it, or leave it down for a test of a host
// without a daemon.
type Daemon struct {
	Bin    string // the tasksessiond binary
	Dir    string // holds the socket and the database
	Socket string
	DB     string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	stderr lockedBuffer
}

// NewDaemon picks a daemon's paths. The dir is short (os.MkdirTemp("",
// "tsd")): a Unix socket path must fit in about 100 bytes.
func NewDaemon(tb testing.TB) *Daemon {
	tb.Helper()
	dir, err := os.MkdirTemp("", "tsd")
	if err != nil {
		tb.Fatal(err)
	}
	d := &Daemon{Bin: Binary(tb), Dir: dir, Socket: filepath.Join(dir, "d.sock"), DB: filepath.Join(dir, "d.db")}
	tb.Cleanup(func() {
		d.Stop(tb)
		d.stopOthers(tb)
		if tb.Failed() {
			tb.Logf("tasksessiond serve stderr:\n%s", d.stderr.String())
			if b, err := os.ReadFile(d.AutostartLog()); err == nil {
				tb.Logf("the autostarted daemon's log (%s):\n%s", d.AutostartLog(), b)
			}
		}
		os.RemoveAll(dir)
	})
	return d
}

// Env returns the environment that points tasksessiond commands at this daemon.
func (d *Daemon) Env() []string {
	return []string{"TASKSESSIOND_SOCKET=" + d.Socket, "TASKSESSIOND_DB=" + d.DB}
}

// Start starts the daemon and waits until it answers on its socket.
func (d *Daemon) Start(tb testing.TB) {
	tb.Helper()
	d.mu.Lock()
	if d.cmd != nil {
		d.mu.Unlock()
		tb.Fatal("harness: the daemon is already running")
	}
	cmd := exec.Command(d.Bin, "serve", "--db", d.DB, "--socket", d.Socket, "--sync", "normal")
	cmd.Stdout, cmd.Stderr = &d.stderr, &d.stderr
	if err := cmd.Start(); err != nil {
		d.mu.Unlock()
		tb.Fatalf("harness: start the daemon: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	d.cmd, d.exited = cmd, exited
	d.mu.Unlock()

	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := client.Dial(ctx, d.Socket)
		cancel()
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-exited:
			tb.Fatalf("harness: the daemon exited at start:\n%s", d.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("harness: the daemon did not answer on %s within 10s: %v\n%s", d.Socket, err, d.stderr.String())
		}
	}
}

// Stop stops the daemon (SIGTERM, then SIGKILL after 5s); a daemon not running is left alone.
func (d *Daemon) Stop(tb testing.TB) {
	tb.Helper()
	d.mu.Lock()
	cmd, exited := d.cmd, d.exited
	d.cmd = nil
	d.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(os.Interrupt)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-exited
		tb.Errorf("harness: the daemon did not stop within 5s of SIGINT")
	}
}

// Kill kills the daemon hard (SIGKILL), as a crash would.
func (d *Daemon) Kill(tb testing.TB) {
	tb.Helper()
	d.mu.Lock()
	cmd, exited := d.cmd, d.exited
	d.cmd = nil
	d.mu.Unlock()
	if cmd == nil {
		tb.Fatal("harness: the daemon is not running")
	}
	cmd.Process.Kill()
	<-exited
}

// Client dials the daemon; the connection is closed at the end of the test.
func (d *Daemon) Client(tb testing.TB) *client.Client {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, d.Socket)
	if err != nil {
		tb.Fatalf("harness: dial the daemon: %v", err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// Resume returns a session as the daemon holds it (its tasks, and for a
// compacted lineage the injected messages), following compaction to the
// newest session.
func (d *Daemon) Resume(tb testing.TB, sessionID string) wire.Resumed {
	tb.Helper()
	c := d.Client(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	id := sessionID
	if head, err := c.Head(ctx, sessionID); err == nil && head.ID != "" {
		id = head.ID
	}
	r, err := c.ResumeSession(ctx, id)
	if err != nil {
		tb.Fatalf("harness: resume %s: %v", sessionID, err)
	}
	return r
}

// AutostartLog is where a daemon that a bridge or hook started on this
// socket writes its log.
func (d *Daemon) AutostartLog() string { return filepath.Join(d.Dir, "tasksessiond.log") }

// Status asks whatever daemon answers on the socket (the harness's, or one
// a bridge or hook started) for its status.
func (d *Daemon) Status(tb testing.TB) wire.DaemonStatus {
	tb.Helper()
	c := d.Client(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := c.Status(ctx)
	if err != nil {
		tb.Fatalf("harness: daemon/status: %v", err)
	}
	return st
}

// stopOthers stops a daemon on this socket that the harness did not start
// (a bridge or hook autostarted it, detached): by the pid daemon/status
// gives, SIGTERM then SIGKILL, so that no test leaves one behind.
func (d *Daemon) stopOthers(tb testing.TB) {
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := client.Dial(ctx, d.Socket)
		if err != nil {
			cancel()
			return // nobody answers
		}
		st, err := c.Status(ctx)
		c.Close()
		cancel()
		if err != nil || st.PID <= 0 || st.PID == os.Getpid() {
			tb.Errorf("harness: a daemon answers on %s but its status has no pid: %v", d.Socket, err)
			return
		}
		tb.Logf("harness: stopping the autostarted daemon, pid %d", st.PID)
		syscall.Kill(st.PID, syscall.SIGTERM)
		deadline := time.Now().Add(5 * time.Second)
		for alive(st.PID) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(st.PID) {
			syscall.Kill(st.PID, syscall.SIGKILL)
			tb.Errorf("harness: the autostarted daemon (pid %d) did not stop within 5s of SIGTERM", st.PID)
			for alive(st.PID) {
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
}

// Stderr returns what the daemon has written so far.
func (d *Daemon) Stderr() string { return d.stderr.String() }

// lockedBuffer is a bytes.Buffer safe for a process's writes and a test's reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// CreateTasks creates n tasks in session id (created when missing)
// through the daemon's client, not through a model (fast): subjects by
// format of the task's number ("Task number %03d"), descriptions of
// descLen characters starting "Description of task NNN: ".
func (d *Daemon) CreateTasks(tb testing.TB, id string, n, descLen int, format string) {
	tb.Helper()
	c := d.Client(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.Head(ctx, id); err != nil {
		if _, err := c.CreateSession(ctx, wire.CreateSession{SessionID: id, Title: "e2e"}); err != nil {
			tb.Fatalf("harness: create session %s: %v", id, err)
		}
	}
	for i := 1; i <= n; i++ {
		desc := fmt.Sprintf("Description of task %03d: ", i)
		desc += strings.Repeat("abcdefghij", descLen/10+1)[:max(0, descLen-len(desc))]
		d.call(tb, c, ctx, id, "TaskCreate", map[string]any{"subject": fmt.Sprintf(format, i), "description": desc})
	}
}

// Call makes one Task tool call in session id through the daemon's client,
// failing the test unless it succeeds.
func (d *Daemon) Call(tb testing.TB, id, name string, args map[string]any) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d.call(tb, d.Client(tb), ctx, id, name, args)
}

func (d *Daemon) call(tb testing.TB, c *client.Client, ctx context.Context, id, name string, args map[string]any) {
	tb.Helper()
	res, err := c.CallTool(ctx, client.ToolCall{SessionID: id, Name: name, Arguments: args})
	if err != nil {
		tb.Fatalf("harness: %s in %s: %v", name, id, err)
	}
	if res.IsError {
		tb.Fatalf("harness: %s in %s: %s", name, id, res.Text())
	}
}

// LoseDatabase stops the daemon, moves its database (and the database's
// -wal and -shm files) aside, as a user who lost it, and starts it again
// on an empty one at the same path.
func (d *Daemon) LoseDatabase(tb testing.TB) {
	tb.Helper()
	d.Stop(tb)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Rename(d.DB+suffix, d.DB+suffix+".lost"); err != nil && !os.IsNotExist(err) {
			tb.Fatalf("harness: move the database aside: %v", err)
		}
	}
	d.Start(tb)
}

// Subjects returns "taskid status subject" of each task the daemon holds
// in session id's lineage (followed to its head).
func (d *Daemon) Subjects(tb testing.TB, id string) []string {
	tb.Helper()
	var out []string
	for _, task := range d.Resume(tb, id).Tasks {
		out = append(out, fmt.Sprintf("%d %s %s", task.Taskid, task.Status, task.Subject))
	}
	return out
}
