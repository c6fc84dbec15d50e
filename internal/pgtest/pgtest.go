// Package pgtest runs a real PostgreSQL server for tests and benches, from
// the installed PostgreSQL binaries: initdb into a temporary directory, a
// server listening on a Unix socket only, run as the postgres OS user when
// the process is root (PostgreSQL refuses to run as root). One server per
// test binary (Main), a fresh database per test (NewDB).
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	neturl "net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

// EnvRequired, when "1" (CI sets it), makes a missing PostgreSQL fail the
// tests that need one instead of skipping them.
const EnvRequired = "TASKSESSIOND_PG_REQUIRED"

// Options configure a server.
type Options struct {
	// Durable keeps fsync and synchronous_commit on (the bench); tests
	// turn both off, which a clean restart does not lose from.
	Durable bool
	// MaxConns is max_connections (default 200).
	MaxConns int
}

// Server is a running PostgreSQL.
type Server struct {
	Dir    string // holds data/ and the socket
	opts   string // the server's options, for pg_ctl start
	bin    string
	cred   *syscall.Credential
	admin  *sql.DB
	n      atomic.Int64
	mu     sync.Mutex
	closed bool
}

// BinDir finds the PostgreSQL server binaries: $PG_BIN, pg_config
// --bindir, the newest /usr/lib/postgresql/*/bin, or initdb on the PATH.
func BinDir() (string, error) {
	var dirs []string
	if d := os.Getenv("PG_BIN"); d != "" {
		dirs = append(dirs, d)
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(found, func(i, j int) bool { return version(found[i]) > version(found[j]) })
	dirs = append(dirs, found...)
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
				return d, nil
			}
		}
	}
	return "", errors.New("no PostgreSQL server binaries (initdb, pg_ctl) found: install PostgreSQL (Debian: apt-get install postgresql) or set PG_BIN")
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// Start initialises and starts a server in a new temporary directory.
func Start(opts Options) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 200
	}
	// Short: the socket's path must fit in about 100 bytes.
	dir, err := os.MkdirTemp("", "tsdpg")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{Dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: running as root, PostgreSQL needs another user and there is no postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := s.run("initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "-N"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	durable := "off"
	if opts.Durable {
		durable = "on"
	}
	o := fmt.Sprintf("-k %s -c listen_addresses='' -c fsync=%s -c synchronous_commit=%s -c full_page_writes=%s -c max_connections=%d",
		dir, durable, durable, durable, opts.MaxConns)
	s.opts = o
	if err := s.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.admin, err = sql.Open("pgx", s.URL("postgres"))
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	return s, nil
}

func (s *Server) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.Dir
	// pg_ctl leaves a server running: never wait on its inherited pipes.
	cmd.WaitDelay = 2 * time.Second
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd.CombinedOutput()
}

// Log is the server's log, for a failure's message.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "log"))
	return string(b)
}

// URL is the connection string of database name, over the socket.
func (s *Server) URL(name string) string {
	return "postgres://postgres@/" + name + "?host=" + s.Dir + "&sslmode=disable"
}

// CreateDB makes a new, empty database and returns its URL.
func (s *Server) CreateDB(ctx context.Context, prefix string) (string, error) {
	name := fmt.Sprintf("%s_%d", sanitize(prefix), s.n.Add(1))
	if _, err := s.admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return s.URL(name), nil
}

// CreateDBAt makes database name on the server that url connects to (its
// role may CREATE DATABASE) and returns the new database's URL.
func CreateDBAt(ctx context.Context, url, name string) (string, error) {
	u, err := neturl.Parse(url)
	if err != nil {
		return "", fmt.Errorf("parse %s: %w", url, err)
	}
	admin, err := sql.Open("pgx", url)
	if err != nil {
		return "", err
	}
	defer admin.Close()
	name = sanitize(name)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

func sanitize(p string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(p) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	if b.Len() == 0 || b.String()[0] >= '0' && b.String()[0] <= '9' {
		return "t" + b.String()
	}
	return b.String()
}

// Restart restarts the server (pg_ctl restart, fast shutdown): every
// connection is cut, and the server is back when Restart returns.
func (s *Server) Restart() error {
	// -l again: without it the new server would write to our pipe.
	if out, err := s.run("pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-l", filepath.Join(s.Dir, "log"), "-m", "fast", "-w", "-t", "60", "restart"); err != nil {
		return fmt.Errorf("pgtest: pg_ctl restart: %w\n%s", err, out)
	}
	return nil
}

// Start starts the server again after Stop.
func (s *Server) Start() error {
	if out, err := s.run("pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-l", filepath.Join(s.Dir, "log"), "-o", s.opts, "-w", "-t", "60", "start"); err != nil {
		return fmt.Errorf("pgtest: pg_ctl start: %w\n%s%s", err, out, s.Log())
	}
	return nil
}

// Stop stops the server (fast shutdown) until Start.
func (s *Server) Stop() error {
	if out, err := s.run("pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-m", "fast", "-w", "-t", "60", "stop"); err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop: %w\n%s", err, out)
	}
	return nil
}

// Close stops the server and removes its directory.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.admin != nil {
		s.admin.Close()
	}
	out, err := s.run("pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-m", "immediate", "-w", "stop")
	os.RemoveAll(s.Dir)
	if err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop: %w\n%s", err, out)
	}
	return nil
}

// The test binary's server, started by Main.
var (
	shared   *Server
	startErr error
)

// Main runs a test binary's tests with one server started for them all,
// stopped after. Use it from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	shared, startErr = Start(Options{})
	if startErr == nil {
		defer shared.Close()
	}
	return m.Run()
}

// Shared returns the test binary's server, skipping the test when there is
// none (failing it when EnvRequired is set).
func Shared(tb testing.TB) *Server {
	tb.Helper()
	if shared == nil {
		err := startErr
		if err == nil {
			err = errors.New("pgtest.Main did not run (TestMain)")
		}
		if os.Getenv(EnvRequired) == "1" {
			tb.Fatalf("PostgreSQL is required (%s=1) but cannot be had: %v", EnvRequired, err)
		}
		tb.Skipf("skipping: no PostgreSQL to test against: %v", err)
	}
	return shared
}

// NewDB returns the URL of a fresh database on the shared server.
func NewDB(tb testing.TB) string {
	tb.Helper()
	s := Shared(tb)
	url, err := s.CreateDB(context.Background(), tb.Name())
	if err != nil {
		tb.Fatal(err)
	}
	return url
}

// StartFor starts a server of the test's own, stopped when it ends, for a
// test binary without Main; it skips like Shared when none can be had.
func StartFor(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := Start(opts)
	if err != nil {
		if os.Getenv(EnvRequired) == "1" {
			tb.Fatalf("PostgreSQL is required (%s=1) but cannot be had: %v", EnvRequired, err)
		}
		tb.Skipf("skipping: no PostgreSQL to test against: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}
