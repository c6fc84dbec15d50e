// Package pgdb adapts tasksessiond to PostgreSQL, for a fleet of daemons
// sharing one database (fleet mode): pgx through database/sql and sqlx,
// the embedded goose migrations of migrations/postgres, the queries of
// package db with the same meaning, and the leases by which one daemon at
// a time serves each session (lease.go).
package pgdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib" // and the "pgx" database/sql driver
	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/migrations/postgres"
)

// DefaultLease is how long a session's lease lasts unless renewed; the
// holder renews it every third of that.
const DefaultLease = 10 * time.Second

// IsURL reports whether a --db value names a PostgreSQL database.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Options configure Open.
type Options struct {
	// Lease is how long a session's lease lasts unless renewed; default
	// DefaultLease.
	Lease time.Duration
	// MaxConns bounds the connections to the server; default 32.
	MaxConns int
	Logger   *slog.Logger     // nil discards
	Now      func() time.Time // default time.Now; stamps rows
}

var _ tasksessiond.Storage = (*DB)(nil)

// DB is a PostgreSQL database shared by a fleet of daemons; this value is
// one daemon's view of it, holding that daemon's leases.
type DB struct {
	x     *sqlx.DB
	where string // the URL without its password, for status and logs
	now   func() time.Time
	log   *slog.Logger

	// The lease holder: a random id per process, and who that is for
	// people (host and pid).
	owner, ownerInfo string
	lease            time.Duration

	// known is the newest schema this binary's migrations make; newer is
	// set once a newer daemon is found to have migrated the database
	// under this one (schema.go).
	known int64
	newer atomic.Pointer[NewerSchemaError]

	mu sync.Mutex
	// held: the leases this daemon holds, each with when the statement
	// that last took or renewed it began, by this daemon's monotonic clock.
	held     map[string]time.Time
	renewing map[string]bool // the leases being renewed one by one (renewOne)
	onLost   func(string)

	closeOnce sync.Once
	closed    chan struct{}
	done      chan struct{}
}

// Open connects to the database at dsn (a postgres:// URL), runs the
// migrations and starts renewing leases.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 32
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	where := Redact(dsn)
	// Migrations first, on a pool of their own without the timeouts below
	// (a migration may take longer than a lease).
	known, err := migrateAt(ctx, dsn, where, opts.Lease)
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", where, err)
	}
	bound(cfg, opts.Lease)
	x := sqlx.NewDb(stdlib.OpenDB(*cfg), "pgx")
	x.SetMaxOpenConns(opts.MaxConns)
	x.SetMaxIdleConns(opts.MaxConns)
	// A server restarted under us leaves dead connections in the pool:
	// they are found out by the next use (which fails, -32004) and not
	// reused after that.
	x.SetConnMaxLifetime(time.Hour)
	if err := x.PingContext(ctx); err != nil {
		x.Close()
		return nil, fmt.Errorf("connect to %s: %w", where, err)
	}
	id := make([]byte, 8)
	rand.Read(id)
	host, _ := os.Hostname()
	clock := opts.Now
	d := &DB{x: x, where: where, log: opts.Logger,
		now:   func() time.Time { return clock().UTC().Truncate(time.Microsecond) },
		known: known, owner: hex.EncodeToString(id), lease: opts.Lease, held: map[string]time.Time{}, renewing: map[string]bool{},
		closed: make(chan struct{}), done: make(chan struct{})}
	d.ownerInfo = fmt.Sprintf("daemon %s on %s, pid %d", d.owner, host, os.Getpid())
	go d.renewer()
	return d, nil
}

// migrateAt migrates the database and returns its schema (the newest
// this binary knows).
func migrateAt(ctx context.Context, dsn, where string, lease time.Duration) (int64, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", where, err)
	}
	if cfg.ConnectTimeout <= 0 {
		// A server that does not answer fails the start, not hangs it.
		cfg.ConnectTimeout = max(lease, 5*time.Second)
	}
	x := stdlib.OpenDB(*cfg)
	defer x.Close()
	if err := x.PingContext(ctx); err != nil {
		return 0, fmt.Errorf("connect to %s: %w", where, err)
	}
	known, err := migrate(ctx, x)
	if _, ok := errors.AsType[*NewerSchemaError](err); ok {
		return 0, fmt.Errorf("%s: %w", where, err)
	}
	if err != nil {
		return 0, fmt.Errorf("migrate %s: %w", where, err)
	}
	return known, nil
}

func migrate(ctx context.Context, x *sql.DB) (int64, error) {
	// Daemons of a fleet may start together: goose's session lock makes one
	// of them migrate and the others wait for it.
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return 0, err
	}
	p, err := Migrations(x, goose.WithSessionLocker(locker))
	if err != nil {
		return 0, fmt.Errorf("load migrations: %w", err)
	}
	// A database a newer daemon migrated is refused before anything is
	// written: goose's Up would find nothing pending and let this daemon
	// write rows the newer ones refuse (a chain or a column it does not
	// know). GetVersions takes no lock and, on a database that has goose's
	// table, writes nothing.
	current, known, err := p.GetVersions(ctx)
	if err != nil {
		return 0, fmt.Errorf("read the schema version: %w", err)
	}
	if current > known {
		return 0, &NewerSchemaError{Schema: current, Known: known}
	}
	_, err = p.Up(ctx)
	return known, err
}

// Migrations is goose's provider of fleet mode's schema on x: the SQL of
// migrations/postgres and the Go migration that chains a log logged
// before the chain (6, chain.go).
func Migrations(x *sql.DB, opts ...goose.ProviderOption) (*goose.Provider, error) {
	return goose.NewProvider(goose.DialectPostgres, x, postgres.FS, append(opts, goose.WithGoMigrations(chainMigration))...)
}

// Path is where the database is, for daemon/status: the URL without its
// password.
func (d *DB) Path() string { return d.where }

// Owner is this daemon as a lease holder names it.
func (d *DB) Owner() string { return d.ownerInfo }

// Now is the clock rows are stamped with.
func (d *DB) Now() time.Time { return d.now() }

// WAL is SQLite's; PostgreSQL's is its own business.
func (d *DB) WAL() tasksessiond.WAL { return tasksessiond.WAL{} }

// Problem is what a newer daemon's migration under this one left it (it
// writes nothing more), else "": a fleet's database is reached over the
// network, and its failures are each call's.
func (d *DB) Problem() string {
	if e := d.newer.Load(); e != nil {
		return e.Error()
	}
	return ""
}

// Close stops renewing, gives up every lease this daemon holds (so that
// another daemon may serve its sessions at once) and closes the pool.
func (d *DB) Close() error {
	var err error
	d.closeOnce.Do(func() {
		close(d.closed)
		<-d.done
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, rerr := d.x.ExecContext(ctx, `DELETE FROM leases WHERE owner = $1`, d.owner); rerr != nil {
			d.log.Warn("could not give up the leases at close; they expire on their own", slog.Any("err", rerr))
		}
		err = d.x.Close()
	})
	return err
}

// SQL gives tests and the crash harness the pool, to look at the database
// as psql would.
func (d *DB) SQL() *sql.DB { return d.x.DB }

// pgCode is the SQLSTATE of a server error, "" for another error.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }
