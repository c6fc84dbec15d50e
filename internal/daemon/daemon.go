// Package daemon wires the database, the session manager and the server
// into the running daemon, so that main and the end-to-end tests share it.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/paths"
	"github.com/tasksessiond/tasksessiond/internal/pgdb"
	"github.com/tasksessiond/tasksessiond/internal/server"
	"github.com/tasksessiond/tasksessiond/internal/session"
)

// Config is what `tasksessiond serve` takes.
type Config struct {
	DB     string
	Socket string
	Sync   db.Sync
	// MaxDBBytes caps the database file (0: none).
	MaxDBBytes int64
	MaxConns   int
	// MaxLoaded and IdleTimeout bound the sessions kept in memory; an
	// evicted session is replayed on its next use.
	MaxLoaded   int
	IdleTimeout time.Duration
	Version     string
	// Lease is how long a session's lease lasts in fleet mode (a
	// postgres:// DB); 0 for the default. SQLite has no leases.
	Lease  time.Duration
	Logger *slog.Logger
	// Server adjusts the server's configuration beyond the above (the
	// tests shorten timeouts with it); nil leaves the defaults.
	Server func(*server.Config)
}

// Daemon is a running tasksessiond.
type Daemon struct {
	cfg         Config
	db          storage
	ownDB       bool // opened by Open, closed by Close
	mgr         *session.Manager
	srv         *server.Server
	log         *slog.Logger
	stopEvictor context.CancelFunc
	evictorDone chan struct{}
}

// Open opens the database at cfg.DB (running migrations) and starts the
// daemon on it. A live daemon on the socket, or a socket directory open to
// others, is found before the database is touched.
func Open(ctx context.Context, cfg Config) (*Daemon, error) {
	if err := server.CheckSocket(cfg.Socket); err != nil {
		return nil, err
	}
	// A socket directory that would be refused at listen is refused now,
	// before a database is created or migrated for nothing.
	if err := paths.PrivateIfExists(filepath.Dir(cfg.Socket)); err != nil {
		return nil, err
	}
	d, err := openStorage(ctx, cfg)
	if err != nil {
		return nil, err
	}
	dm, err := start(d, cfg)
	if err != nil {
		d.Close()
		return nil, err
	}
	dm.ownDB = true
	return dm, nil
}

// Start wires a daemon around an open database — the session manager, its
// evictor, the server on cfg.Socket — the one wiring that serve, the tests
// and the examples share. cfg.DB is only reported. Close leaves d open.
func Start(d *db.DB, cfg Config) (*Daemon, error) { return start(d, cfg) }

func start(d storage, cfg Config) (*Daemon, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.DB == "" || pgdb.IsURL(cfg.DB) {
		cfg.DB = d.Path() // a URL without its password
	}
	mgr := session.NewManager(d, cfg.Logger)
	if cfg.MaxLoaded > 0 {
		mgr.SetMaxLoaded(cfg.MaxLoaded)
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = session.DefaultIdleTimeout
	}
	scfg := server.Config{Socket: cfg.Socket, Database: cfg.DB, Version: cfg.Version, MaxConns: cfg.MaxConns, Logger: cfg.Logger}
	if cfg.Server != nil {
		cfg.Server(&scfg)
	}
	srv := server.New(mgr, scfg)
	if err := srv.Listen(); err != nil {
		return nil, err
	}
	ectx, stop := context.WithCancel(context.Background())
	dm := &Daemon{cfg: cfg, db: d, mgr: mgr, srv: srv, log: cfg.Logger, stopEvictor: stop, evictorDone: make(chan struct{})}
	go func() {
		defer close(dm.evictorDone)
		mgr.RunEvictor(ectx, cfg.IdleTimeout)
	}()
	return dm, nil
}

// Manager is the daemon's session manager.
func (d *Daemon) Manager() *session.Manager { return d.mgr }

// Server is the daemon's socket server.
func (d *Daemon) Server() *server.Server { return d.srv }

// Socket is the path the daemon serves on.
func (d *Daemon) Socket() string { return d.cfg.Socket }

// Serve serves until Close; it returns nil after a clean Close.
func (d *Daemon) Serve() error {
	d.log.Info("serving", slog.String("socket", d.cfg.Socket), slog.String("database", d.cfg.DB), slog.String("sync", string(d.cfg.Sync)))
	return d.srv.Serve()
}

// Close stops accepting, lets in-flight calls commit and be answered (until
// ctx ends), then closes the database.
func (d *Daemon) Close(ctx context.Context) error {
	err := d.srv.Shutdown(ctx)
	d.stopEvictor()
	<-d.evictorDone
	if !d.ownDB {
		return err
	}
	if cerr := d.db.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close database: %w", cerr))
	}
	return err
}
