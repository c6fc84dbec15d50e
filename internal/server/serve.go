// Package server serves the JSON-RPC methods of DESIGN.md on a Unix socket.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/peercred"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/wire"
)

// Config configures a Server.
type Config struct {
	Socket   string // path of the Unix socket
	Database string // shown by daemon/status
	Version  string
	MaxConns int // connections served at once; default 1024
	MaxLine  int // bytes per message; default jsonrpc.DefaultMaxLine
	Logger   *slog.Logger
	// AllowUIDs are the users whose connections are served (checked with
	// SO_PEERCRED); empty means the daemon's own user only.
	AllowUIDs []int
	// LineTimeout bounds how long a message may take to arrive once its
	// first byte has (default 10s); idle time between messages is free.
	LineTimeout time.Duration
	// WriteTimeout bounds how long a peer may go without reading what it
	// is sent before its connection is closed (default 30s).
	WriteTimeout time.Duration
	// WatchBuffer is how many changes a watcher may fall behind by before
	// it is told so and closed (default DefaultWatchBuffer).
	WatchBuffer int
	// MaxWatches bounds the sessions one connection watches at once
	// (default DefaultMaxWatches); watching a session it already watches
	// adds nothing.
	MaxWatches int
	// MaxBatch bounds the requests of one batch (default DefaultMaxBatch),
	// and MaxBatchBytes its replies (default DefaultMaxBatchBytes): the
	// requests after the one whose reply passed it are not done, and are
	// answered so.
	MaxBatch      int
	MaxBatchBytes int
}

// Defaults of the bounds on what one connection may ask.
const (
	DefaultMaxWatches    = 256
	DefaultMaxBatch      = 256
	DefaultMaxBatchBytes = 16 << 20
)

// Server accepts connections and serves each on its own goroutine.
type Server struct {
	cfg   Config
	mgr   *session.Manager
	log   *slog.Logger
	table map[string]method
	pid   int

	ln      *net.UnixListener
	accept  func() (*net.UnixConn, error) // ln.AcceptUnix; tests stand in for it
	peerUID func(*net.UnixConn) (int, error)
	closing atomic.Bool
	mu      sync.Mutex
	conns   map[*conn]struct{}
	wg      sync.WaitGroup
	ctx     context.Context // the parent of every request; cancelled on a forced stop
	cancel  context.CancelFunc
}

// New returns a server for mgr.
func New(mgr *session.Manager, cfg Config) *Server {
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 1024
	}
	if cfg.MaxLine <= 0 {
		cfg.MaxLine = jsonrpc.DefaultMaxLine
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.LineTimeout <= 0 {
		cfg.LineTimeout = 10 * time.Second
	}
	if cfg.WatchBuffer <= 0 {
		cfg.WatchBuffer = DefaultWatchBuffer
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 30 * time.Second
	}
	if cfg.MaxWatches <= 0 {
		cfg.MaxWatches = DefaultMaxWatches
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = DefaultMaxBatch
	}
	if cfg.MaxBatchBytes <= 0 {
		cfg.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if len(cfg.AllowUIDs) == 0 {
		cfg.AllowUIDs = []int{os.Getuid()}
	}
	s := &Server{cfg: cfg, mgr: mgr, log: cfg.Logger, pid: os.Getpid(), conns: make(map[*conn]struct{}), peerUID: peercred.UID}
	s.table = s.methods()
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Listen opens the socket; see listen for the care it takes.
func (s *Server) Listen() error {
	ln, err := listen(s.cfg.Socket)
	if err != nil {
		return err
	}
	s.ln = ln
	s.accept = ln.AcceptUnix
	return nil
}

// Serve accepts connections until Shutdown. It returns nil after Shutdown.
func (s *Server) Serve() error {
	if s.ln == nil {
		return errors.New("serve: Listen first")
	}
	var delay time.Duration
	for {
		nc, err := s.accept()
		if err != nil {
			if s.closing.Load() {
				return nil
			}
			// Out of descriptors (EMFILE, ENFILE) or another passing
			// failure: keep serving the connections there are, and try
			// again a little later rather than spin.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.log.Error("accept failed; retrying", slog.Any("err", err), slog.Duration("in", delay))
			select {
			case <-time.After(delay):
			case <-s.ctx.Done():
				return nil
			}
			continue
		}
		delay = 0
		c := newConn(s, nc)
		uid, err := s.peerUID(nc)
		if err != nil {
			// Fail closed: a peer whose user cannot be told is not served.
			s.log.Warn("connection refused: peer credentials unavailable", slog.Any("err", err))
			c.refuse(jsonrpc.Errorf(wire.CodeInvalidRequest, "connection refused: the daemon could not tell which user is connecting (%v)", err))
			continue
		}
		if !slices.Contains(s.cfg.AllowUIDs, uid) {
			s.log.Warn("connection refused: peer is another user", slog.Int("uid", uid))
			c.refuse(jsonrpc.Errorf(wire.CodeInvalidRequest, "connection refused: uid %d may not use this daemon; it serves its owner only", uid))
			continue
		}
		if !s.track(c) {
			if s.closing.Load() {
				c.refuse(jsonrpc.Errorf(wire.CodeInternal, "the daemon is shutting down; retry once it is back"))
				continue
			}
			c.refuse(jsonrpc.Errorf(wire.CodeInternal, "too many connections: the daemon serves at most %d at once; close idle ones and retry", s.cfg.MaxConns))
			s.log.Warn("connection refused: limit reached", slog.Int("max", s.cfg.MaxConns))
			continue
		}
		go func() {
			defer s.untrack(c)
			c.serve()
		}()
	}
}

func (s *Server) track(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() || len(s.conns) >= s.cfg.MaxConns {
		return false
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return true
}

func (s *Server) untrack(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.wg.Done()
}

// Shutdown stops accepting, lets every connection finish the request it is
// serving (so in-flight calls commit and are answered), then closes them.
// If ctx ends first, the remaining requests are cancelled.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closing.Store(true)
	var err error
	if s.ln != nil {
		err = s.ln.Close()
	}
	s.mu.Lock()
	for c := range s.conns {
		c.stopReading()
	}
	s.mu.Unlock()

	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.cancel()
		s.mu.Lock()
		for c := range s.conns {
			c.nc.Close()
		}
		s.mu.Unlock()
		<-done
	}
	s.cancel()
	return err
}
