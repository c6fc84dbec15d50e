// Package testutil holds helpers shared by the tests: a real database in a
// temp dir, a real daemon on a real Unix socket.
package testutil

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver for RawDB

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/daemon"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/server"
	"github.com/tasksessiond/tasksessiond/internal/session"
)

// Clock is a deterministic clock: each reading is one millisecond later.
func Clock() func() time.Time {
	var n atomic.Int64
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Millisecond) }
}

// MustOpenDB opens a fresh database file in tb's temp dir.
func MustOpenDB(tb testing.TB) *db.DB {
	tb.Helper()
	return MustOpenDBAt(tb, filepath.Join(tb.TempDir(), "test.db"))
}

// MustOpenDBAt opens the database at path, closed when the test ends. A
// path with no file yet gets a fresh database (FreshDB) first.
func MustOpenDBAt(tb testing.TB, path string) *db.DB {
	tb.Helper()
	if _, err := os.Stat(path); os.IsNotExist(err) {
		FreshDB(tb, path)
	}
	d, err := db.Open(context.Background(), path, db.Options{Sync: db.SyncNormal, Now: Clock()})
	if err != nil {
		tb.Fatalf("open database: %v", err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}

// FreshDB writes at path (its directory made 0700, the file 0600, as
// db.Open makes them) a copy of a new database that db.Open created,
// migrated and closed once in this process. Migrating afresh costs some
// 0.6 s of CPU under -race, which every test not about creating or
// migrating a database would pay; the tests that are about it call
// db.Open on a path with no file.
func FreshDB(tb testing.TB, path string) {
	tb.Helper()
	fresh.once.Do(func() {
		dir, err := os.MkdirTemp("", "tsd-fresh")
		if err != nil {
			fresh.err = err
			return
		}
		defer os.RemoveAll(dir)
		p := filepath.Join(dir, "fresh.db")
		d, err := db.Open(context.Background(), p, db.Options{})
		if err != nil {
			fresh.err = err
			return
		}
		if err := d.Close(); err != nil {
			fresh.err = err
			return
		}
		// Closed cleanly, the database is the one file: no -wal, no -shm.
		if _, err := os.Stat(p + "-wal"); !os.IsNotExist(err) {
			fresh.err = fmt.Errorf("a closed database left its WAL beside it (%v)", err)
			return
		}
		fresh.bytes, fresh.err = os.ReadFile(p)
	})
	if fresh.err != nil {
		tb.Fatalf("make a fresh database: %v", fresh.err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, fresh.bytes, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// fresh is the file FreshDB copies, made once.
var fresh struct {
	once  sync.Once
	bytes []byte
	err   error
}

// SocketPath returns a short socket path (Unix socket paths are limited to
// about 100 bytes, and t.TempDir paths can be longer).
func SocketPath(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "tsd")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "d.sock")
}

// Daemon is a daemon running in-process on a real socket, wired as
// `tasksessiond serve` wires it (its evictor and checkpointer run too).
type Daemon struct {
	Socket string
	DB     *db.DB
	Mgr    *session.Manager
	Srv    *server.Server
}

// StartDaemon serves d on a fresh socket until the test ends; opts adjust
// the server's configuration (a logger, timeouts).
func StartDaemon(tb testing.TB, d *db.DB, opts ...func(*server.Config)) *Daemon {
	tb.Helper()
	return StartDaemonAt(tb, d, SocketPath(tb), opts...)
}

// StartDaemonAt is StartDaemon on a given socket path.
func StartDaemonAt(tb testing.TB, d *db.DB, socket string, opts ...func(*server.Config)) *Daemon {
	tb.Helper()
	cfg := daemon.Config{Socket: socket, Version: "test", MaxConns: 64, Server: func(c *server.Config) {
		for _, o := range opts {
			o(c)
		}
	}}
	// The manager's logger is the server's, when a test gives one.
	probe := server.Config{}
	for _, o := range opts {
		o(&probe)
	}
	cfg.Logger = probe.Logger
	dm, err := daemon.Start(d, cfg)
	if err != nil {
		tb.Fatalf("start daemon: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- dm.Serve() }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		dm.Close(ctx)
		if err := <-done; err != nil {
			tb.Errorf("serve: %v", err)
		}
	})
	return &Daemon{Socket: dm.Socket(), DB: d, Mgr: dm.Manager(), Srv: dm.Server()}
}

// Dial connects a client to the daemon, closed when the test ends.
func (d *Daemon) Dial(tb testing.TB) *client.Client {
	tb.Helper()
	return DialSocket(tb, d.Socket)
}

// DialSocket connects a client to socket, closed when the test ends.
func DialSocket(tb testing.TB, socket string) *client.Client {
	tb.Helper()
	c, err := client.Dial(context.Background(), socket)
	if err != nil {
		tb.Fatalf("dial: %v", err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// Args marshals a map as tool arguments, for readability in tests.
func Args(kv ...any) map[string]any {
	if len(kv)%2 != 0 {
		panic(fmt.Sprintf("Args: odd number of values: %v", kv))
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// RawDB opens the database file directly, for tests that plant rows or
// faults the daemon would never write itself.
func RawDB(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	raw, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { raw.Close() })
	return raw
}

// SyncBuffer is a buffer that a logger or a command writes while a test
// reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Rechain recomputes the checksums of session's log and its head, as a
// deliberate edit that recomputes every checksum would (out of what the
// chain detects): for tests that plant rows to exercise replay itself.
func Rechain(tb testing.TB, raw *sql.DB, session string) {
	tb.Helper()
	_, err := raw.Exec(`
		WITH RECURSIVE chain(session_id, seq, checksum) AS (
			SELECT session_id, seq, tsd_checksum(coalesce((SELECT tsd_snapshot_sum(b.next_taskid, (SELECT json_group_array(json_array(x.taskid, x.status, x.subject, x.description))
            FROM (SELECT * FROM snapshot_tasks st WHERE st.session_id = b.session_id ORDER BY st.taskid) x))
        FROM snapshots b WHERE b.session_id = tool_calls.session_id), 0),
				session_id, seq, call_id, name, arguments, is_error, result, forced)
			FROM tool_calls WHERE session_id = ?1 AND seq = 1
			UNION ALL
			SELECT t.session_id, t.seq, tsd_checksum(chain.checksum, t.session_id, t.seq, t.call_id, t.name, t.arguments, t.is_error, t.result, t.forced)
			FROM chain JOIN tool_calls t ON t.session_id = chain.session_id AND t.seq = chain.seq + 1
		)
		UPDATE tool_calls SET checksum = chain.checksum FROM chain
		WHERE tool_calls.session_id = chain.session_id AND tool_calls.seq = chain.seq;
		DELETE FROM log_heads WHERE session_id = ?1;
		INSERT INTO log_heads (session_id, seq, checksum)
		SELECT ?1, coalesce(max(seq), 0), coalesce((SELECT checksum FROM tool_calls WHERE session_id = ?1 ORDER BY seq DESC LIMIT 1), 0)
		FROM tool_calls WHERE session_id = ?1;`, session)
	if err != nil {
		tb.Fatal(err)
	}
}
