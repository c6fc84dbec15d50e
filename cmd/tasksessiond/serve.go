package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/tasksessiond/tasksessiond/internal/daemon"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/paths"
	"github.com/tasksessiond/tasksessiond/internal/pgdb"
	"github.com/tasksessiond/tasksessiond/internal/session"
)

// shutdownGrace bounds how long in-flight calls get to finish after a signal.
const shutdownGrace = 10 * time.Second

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tasksessiond serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbPath := fs.String("db", paths.DB(), "database file, or a postgres:// URL to serve in a fleet of daemons sharing one PostgreSQL ("+docsURL+"FLEET.md) (env "+paths.EnvDB+")")
	socket := fs.String("socket", paths.Socket(), "Unix socket to serve on, in a directory only you can reach (created 0700 if missing) (env "+paths.EnvSocket+")")
	syncMode := fs.String("sync", "full", "durability of each commit: full (survives power loss) or normal (survives a crash of the daemon)")
	maxConns := fs.Int("max-conns", 1024, "connections served at once")
	maxSize := fs.Int64("max-db-size", 0, "cap on the database file in bytes (0: none); writes past it fail with -32004, reads go on")
	maxSessions := fs.Int("max-sessions", session.DefaultMaxLoaded, "sessions kept in memory; beyond it the least recently used leave (and are replayed on next use)")
	idle := fs.Duration("idle-timeout", session.DefaultIdleTimeout, "a session unused this long leaves memory (and is replayed on next use)")
	lease := fs.Duration("lease", pgdb.DefaultLease, "fleet mode (a postgres:// --db): how long a session stays this daemon's after its last renewal (renewed every third of it); another daemon takes it over after that once this one dies")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	logJSON := fs.Bool("log-json", false, "log JSON lines instead of text")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tasksessiond serve [flags]

Run the daemon: JSON-RPC 2.0 on a Unix socket (mode 0600), the session log in
SQLite. SIGINT or SIGTERM stops it after in-flight calls have committed.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), `
Examples:
  tasksessiond serve
  tasksessiond serve --db ./tasks.db --socket ./run/ts.sock --sync normal   # ./run is created 0700
  tasksessiond serve --db 'postgres://tsd@db.internal/tasks' --lease 10s   # fleet mode: one daemon per machine
`)
	}
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tasksessiond serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	sync, err := db.ParseSync(*syncMode)
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond serve: --%v\n", err)
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "tasksessiond serve: --log-level: %v\n", err)
		return 2
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(stderr, opts)
	if *logJSON {
		h = slog.NewJSONHandler(stderr, opts)
	}
	log := slog.New(h)

	d, err := daemon.Open(ctx, daemon.Config{DB: *dbPath, Socket: *socket, Sync: sync, MaxDBBytes: *maxSize, MaxConns: *maxConns, MaxLoaded: *maxSessions, IdleTimeout: *idle, Lease: *lease, Version: daemonVersion(), Logger: log})
	if err != nil {
		log.Error("cannot start", slog.Any("err", err))
		return 1
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve() }()

	select {
	case err = <-served:
	case <-ctx.Done():
		log.Info("stopping: finishing in-flight calls")
	}
	closeCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if cerr := d.Close(closeCtx); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil {
		log.Error("stopped with an error", slog.Any("err", err))
		return 1
	}
	log.Info("stopped")
	return 0
}
