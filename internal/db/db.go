// Package db adapts tasksessiond to SQLite: opening the database with its
// pragmas, running the embedded goose migrations, and the queries. Rows are
// converted to domain types here, so no package above it sees SQL.
package db

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tasksessiond/tasksessiond"
)

// Sync is the synchronous pragma: full makes every commit durable across
// power loss; normal (in WAL mode) across process crashes only.
type Sync string

const (
	SyncFull   Sync = "full"
	SyncNormal Sync = "normal"
)

// ParseSync validates a --sync value.
func ParseSync(s string) (Sync, error) {
	switch Sync(s) {
	case SyncFull, SyncNormal:
		return Sync(s), nil
	}
	return "", fmt.Errorf("sync must be %q or %q, got %q", SyncFull, SyncNormal, s)
}

// Options configure Open.
type Options struct {
	Sync Sync             // default full
	Now  func() time.Time // default time.Now; tests inject a clock
	// BusyTimeout is how long a write waits for a lock held by another
	// process before failing; default 5s.
	BusyTimeout time.Duration
	// MaxBytes caps the database file (0: no cap). A write that would grow
	// it past the cap fails as on a full disk, and nothing is changed.
	MaxBytes int64
	// Logger receives what the background checkpoints find; nil discards.
	Logger *slog.Logger
	// WALWarnBytes is how much of the WAL a reader may keep from being
	// checkpointed before that is logged; default 64 MiB.
	WALWarnBytes int64
	// WALLimit is the WAL size past which the writer empties it between
	// two commits; default 32 MiB (each emptying stops the commits while
	// it copies the log back: at 16 MiB, 64 sessions lost 7% of their rate).
	WALLimit int64
	// NoUpgrade refuses a database at an older schema (OlderSchemaError)
	// instead of upgrading it, which is one-way: fsck --repair.
	NoUpgrade bool
}

// pageSize is SQLite's default page size, which the database keeps.
const pageSize = 4096

// mmapSize is how much of the database file each connection reads through
// memory mapping rather than a read(2) per page: a daemon just started has
// an empty page cache, and loading a session of 10,000 tasks read some
// 5,000 pages one system call each.
const mmapSize = 256 << 20

var _ tasksessiond.Storage = (*DB)(nil)

// DB is the database: one writer connection and a pool of readers beside it
// (WAL lets them read while the writer commits).
type DB struct {
	path     string
	w        *sqlx.DB
	r        *sqlx.DB
	reads    *preparedReads // r's read queries, prepared
	q        querier        // what the read queries go through: reads, or a read transaction
	now      func() time.Time
	log      *slog.Logger
	lock     *os.File                         // held while open: one writing process
	key      string                           // the file's device and inode, in held
	gone     atomic.Pointer[string]           // why the file at path is not the one open, once it is not
	schema   string                           // what is wrong with the schema's indexes, as found at open
	maxBytes int64                            // the cap on the file (0: none), which an upgrade must fit in
	upgrade  bool                             // an older schema is upgraded, not refused
	wal      atomic.Pointer[tasksessiond.WAL] // as the last checkpoint found it
	walWarn  int64

	stmts      statements
	appends    chan *appendReq // to the group-commit writer
	wr         writerState
	pending    atomic.Int64 // AppendCalls calls not yet returned
	closed     chan struct{}
	writerDone chan struct{}
	closeOnce  sync.Once
	ckptDone   chan struct{}
}

// writerState is owned by the writer goroutine (group.go): nothing else
// reads or writes it once the writer runs.
type writerState struct {
	// The WAL's limit, and the size at which boundWAL next tries to
	// empty it, growing by walStep while a reader pins the log.
	walLimit, walNext, walStep int64
	walLog                     int64 // bytes the log holds since it last restarted, as counted
	busyTimeout                time.Duration
}

var errClosed = errors.New("database closed")

// Open opens (creating if needed) the database at path for writing: it
// refuses a file another program made, takes the lock that makes this the
// only writing process, checks that WAL took, runs the migrations, and
// starts the writer.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	opts = opts.withDefaults()
	// Before anything opens the file: closing a descriptor of a file
	// drops every POSIX lock this process holds on it, SQLite's included.
	if key, ok := fileKey(path); ok {
		if _, mine := held.Load(key); mine {
			return nil, fmt.Errorf("%w: %s is open for writing by this process already; one daemon serves a database at a time", ErrLocked, path)
		}
	}
	if err := refuseForeign(ctx, path); err != nil {
		return nil, err
	}
	if err := createFile(path); err != nil {
		return nil, err
	}
	lock, err := lockFile(path)
	if err != nil {
		return nil, err
	}
	// The file's key, taken before the writer starts: it compares the
	// file at the path with this one before each commit.
	key, _ := fileKey(path)
	d, err := open(ctx, path, opts, key)
	if err != nil {
		lock.Close()
		return nil, err
	}
	d.lock = lock
	if key != "" {
		held.Store(key, struct{}{})
	}
	return d, nil
}

// held are the database files this process has open for writing, by
// device and inode (see fileKey).
var held sync.Map

// OpenReadOnly opens an existing database for reading only, beside a
// daemon that may be writing it (fsck, the crash harness's checks): no
// lock, no migrations, no writer. Only the read queries may be used.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	key, _ := fileKey(path)
	if _, mine := held.Load(key); !mine { // a file this process writes is ours, and must not be opened raw
		if err := refuseForeign(ctx, path); err != nil {
			return nil, err
		}
	}
	opts := Options{}.withDefaults()
	r, err := sqlx.Open("sqlite", dsn(path, opts, false))
	if err != nil {
		return nil, fmt.Errorf("open %s for reading: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	if err := refuseNewer(ctx, path, r); err != nil {
		r.Close()
		return nil, err
	}
	reads := newPreparedReads(r)
	d := &DB{path: path, r: r, reads: reads, q: reads, now: opts.Now, log: opts.Logger, closed: make(chan struct{}),
		writerDone: make(chan struct{}), ckptDone: make(chan struct{})}
	close(d.writerDone)
	close(d.ckptDone)
	return d, nil
}

func open(ctx context.Context, path string, opts Options, key string) (*DB, error) {
	w, err := sqlx.Open("sqlite", WriterDSN(path, opts))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// One writer: SQLite serialises writers anyway, and a single connection
	// makes that order ours instead of the busy handler's.
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	w.SetConnMaxLifetime(0)

	r, err := sqlx.Open("sqlite", dsn(path, opts, false))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s for reading: %w", path, err)
	}
	r.SetMaxOpenConns(4)

	// Times are stored to the microsecond: a time handed back when a row is
	// written must equal the one read back later.
	clock := opts.Now
	now := func() time.Time { return clock().UTC().Truncate(time.Microsecond) }
	reads := newPreparedReads(r)
	d := &DB{path: path, key: key, w: w, r: r, reads: reads, q: reads, now: now, log: opts.Logger, walWarn: opts.WALWarnBytes, maxBytes: opts.MaxBytes, upgrade: !opts.NoUpgrade,
		wr:      writerState{walLimit: opts.WALLimit, walNext: opts.WALLimit, busyTimeout: opts.BusyTimeout},
		appends: make(chan *appendReq), closed: make(chan struct{}),
		writerDone: make(chan struct{}), ckptDone: make(chan struct{})}
	if err := d.init(ctx); err != nil {
		close(d.writerDone)
		close(d.ckptDone)
		d.Close()
		return nil, err
	}
	close(d.ckptDone) // checkpoints run on the writer goroutine
	go d.writer()
	return d, nil
}

func (o Options) withDefaults() Options {
	if o.Sync == "" {
		o.Sync = SyncFull
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.WALWarnBytes <= 0 {
		o.WALWarnBytes = 64 << 20
	}
	if o.WALLimit <= 0 {
		o.WALLimit = 32 << 20
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	return o
}

// WriterDSN is the data source name of the writer connection: the pragmas
// go in it so that every connection opened from it gets them. The bench
// command uses it to measure raw SQLite under the daemon's own settings.
func WriterDSN(path string, opts Options) string { return dsn(path, opts.withDefaults(), true) }

func dsn(path string, opts Options, writer bool) string {
	pragmas := url.Values{}
	pragmas.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	pragmas.Add("_pragma", "foreign_keys(1)")
	pragmas.Add("_pragma", "journal_mode(WAL)")
	pragmas.Add("_pragma", "synchronous("+string(opts.Sync)+")")
	pragmas.Add("_pragma", fmt.Sprintf("mmap_size(%d)", mmapSize))
	if writer {
		pragmas.Set("_txlock", "immediate")
		// Checkpoints run in the background (see checkpointer), not in
		// whichever commit happens to cross the threshold.
		pragmas.Add("_pragma", "wal_autocheckpoint(0)")
		// A restarted log is written over, not truncated (see boundWAL),
		// down to this size if a pinning reader made it grow past it.
		pragmas.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", opts.WALLimit*3/2))
		if opts.MaxBytes > 0 {
			pragmas.Add("_pragma", fmt.Sprintf("max_page_count(%d)", max(opts.MaxBytes/pageSize, 1)))
		}
	} else {
		pragmas.Add("_pragma", "query_only(1)")
	}
	return path + "?" + pragmas.Encode()
}

func createFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create database directory: %w", err)
	}
	_, err := os.Stat(path)
	created := errors.Is(err, fs.ErrNotExist)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open database file: %w", err)
	}
	if err := f.Close(); err != nil || !created {
		return err
	}
	// A new file's name is in its directory, which a power loss may lose
	// unless it is synced too (SQLite's own advice, "atomic commit").
	return syncDir(filepath.Dir(path))
}

// syncDir makes the names in dir durable: a file created, a journal
// removed.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

func (d *DB) init(ctx context.Context) error {
	var mode string
	if err := d.w.GetContext(ctx, &mode, "PRAGMA journal_mode"); err != nil {
		if isCorrupt(err) {
			return fmt.Errorf("database %s is corrupt or is not a SQLite database (%w); refusing to run on it: restore it from a backup, or move it aside to start afresh", d.path, err)
		}
		return fmt.Errorf("open %s: %w", d.path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("open %s: journal_mode is %q, want wal (is the file on a filesystem without shared memory?)", d.path, mode)
	}
	// The switch to WAL removed a rollback journal and made the -wal
	// file: both are names in the directory, durable once it is synced.
	// Without it a power loss can bring the journal back, hot.
	if err := syncDir(filepath.Dir(d.path)); err != nil {
		return err
	}
	if err := d.migrate(ctx, d.maxBytes); err != nil {
		return err
	}
	if err := refuseForeignObjects(ctx, d.path, d.w); err != nil {
		return err
	}
	// An index dropped or changed by hand slows nothing the daemon needs
	// (it answers from the log), but the shell's tasks view reads one:
	// said at once, and in daemon/status, not found as a failure later.
	problems, err := indexProblems(ctx, d.w) // once: not kept prepared
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		d.schema = "the database is damaged: " + strings.Join(problems, "; ")
		d.log.Warn("the database's indexes are not as the schema defines them; the daemon answers from the log, the tasks view may fail",
			slog.String("database", d.path), slog.String("problems", strings.Join(problems, "; ")))
	}
	return d.prepare(ctx)
}

func migrateError(path string, err error) error {
	if isCorrupt(err) {
		return fmt.Errorf("database %s is corrupt (%w); refusing to run on it: restore it from a backup, or move it aside to start afresh", path, err)
	}
	return fmt.Errorf("migrate %s: %w", path, err)
}

// SetMaxBytes changes the cap on the database file at run time (0 lifts
// it), e.g. after an operator has made room.
func (d *DB) SetMaxBytes(ctx context.Context, n int64) error {
	pages := int64(4294967294) // SQLite's largest
	if n > 0 {
		pages = max(n/pageSize, 1)
	}
	// The writer pool has one connection, so the pragma reaches it.
	if _, err := d.w.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", pages)); err != nil {
		return fmt.Errorf("set max_page_count: %w", err)
	}
	return nil
}

// Path is the database file.
func (d *DB) Path() string { return d.path }

// Close stops the writer (a commit in progress finishes first) and closes
// both pools. Appends after Close fail.
func (d *DB) Close() error {
	var err error
	d.closeOnce.Do(func() {
		close(d.closed)
		<-d.writerDone
		<-d.ckptDone
		err = errors.Join(d.reads.close(), d.r.Close())
		if d.w != nil {
			err = errors.Join(err, d.w.Close())
		}
		if d.lock != nil {
			d.lock.Close()
			held.Delete(d.key)
		}
	})
	return err
}

// Now is the database's clock, for callers that stamp records.
func (d *DB) Now() time.Time { return d.now() }

// timeFormat is ISO 8601 in UTC with microseconds: sortable as text and
// readable in the sqlite3 shell.
const timeFormat = "2006-01-02T15:04:05.000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

// IsTime reports whether s is a time as the daemon writes it: fsck names
// a time column edited to anything else.
func IsTime(s string) bool {
	_, err := time.Parse(timeFormat, s)
	return err == nil && len(s) == len(timeFormat)
}

func isConstraint(err error, code int) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == code
}

func isCorrupt(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff // the primary code
	return code == sqlite3.SQLITE_CORRUPT || code == sqlite3.SQLITE_NOTADB
}

func isUniqueViolation(err error) bool {
	return isConstraint(err, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY) || isConstraint(err, sqlite3.SQLITE_CONSTRAINT_UNIQUE)
}

// Pending is how many appends have been handed in and not yet returned:
// the ones being committed, the ones queued behind them, and, for a
// moment, ones just answered.
func (d *DB) Pending() int { return int(d.pending.Load()) }

// IntegrityCheck runs PRAGMA integrity_check, which also checks every
// index against its table, and returns its findings; nil means the file is
// sound.
func (d *DB) IntegrityCheck(ctx context.Context) ([]string, error) {
	var rows []string
	if err := d.q.SelectContext(ctx, &rows, "PRAGMA integrity_check"); err != nil {
		if isCorrupt(err) {
			// A page so malformed that the check itself stops is a
			// finding, not the end of fsck: what can be read is read row
			// by row after it.
			return []string{"SQLite's integrity check stopped at a malformed page (" + err.Error() + "): the file is damaged; what could be read is checked below"}, nil
		}
		return nil, fmt.Errorf("integrity check: %w", err)
	}
	if len(rows) == 1 && rows[0] == "ok" {
		rows = nil
	}
	return rows, nil
}

// querier is what the read queries need; *preparedReads and *sqlx.Tx have it.
type querier interface {
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ReadTx runs fn with a view of the database in which every read sees one
// snapshot, whatever commits meanwhile: a check that compares two reads
// (the log and the tasks view, say) compares like with like. The view
// offers the read queries only; it must not be used after fn returns.
func (d *DB) ReadTx(ctx context.Context, fn func(view *DB) error) error {
	if d.r == nil { // a view already
		return fn(d)
	}
	tx, err := d.r.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("begin read transaction: %w", err)
	}
	defer tx.Rollback()
	return fn(&DB{path: d.path, q: tx, now: d.now})
}

// refuseForeign refuses an existing SQLite file that another program made:
// running on it would switch it to WAL and add this daemon's tables. A
// missing or empty file, or one whose header carries this daemon's
// application_id, is ours; any other is looked at through a read-only
// connection, before anything can write, and is ours if it holds goose's
// version table (a database from before the application_id).
func refuseForeign(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	var header [100]byte
	n, err := io.ReadFull(f, header[:])
	f.Close()
	switch {
	case n == 0:
		return nil
	case err == nil && string(header[:16]) == "SQLite format 3\x00" && binary.BigEndian.Uint32(header[68:72]) == applicationID:
		return nil
	}
	tables, ours, err := schemaObjects(ctx, path, "ro")
	if isConstraint(err, sqlite3.SQLITE_READONLY_ROLLBACK) {
		// A hot journal: a transaction cut by a crash or a power loss
		// (the first moments of a new database among them) that SQLite
		// must roll back before anyone reads the file, which a read-only
		// connection cannot. Rolling it back is the file's own recovery,
		// as any SQLite program opening it does; it adds nothing.
		tables, ours, err = schemaObjects(ctx, path, "rw")
	}
	if err != nil {
		return err
	}
	if ours || len(tables) == 0 {
		return nil
	}
	if len(tables) > 5 {
		tables = append(tables[:5], "…")
	}
	return fmt.Errorf("%s is a SQLite database made by another program (it holds %s); refusing to touch it: give --db a new path, or one tasksessiond made", path, strings.Join(tables, ", "))
}

// schemaObjects lists the file's schema objects through a connection of
// the mode given (never one that creates the file); ours is set when one
// is goose's version table.
func schemaObjects(ctx context.Context, path, mode string) (tables []string, ours bool, err error) {
	conn, err := sql.Open("sqlite", "file:"+path+"?mode="+mode)
	if err != nil {
		return nil, false, fmt.Errorf("open %s: %w", path, err)
	}
	defer conn.Close()
	// Any schema object counts (a file of views alone is someone's too).
	rows, err := conn.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type = 'table' DESC, name`)
	if isConstraint(err, sqlite3.SQLITE_READONLY_ROLLBACK) {
		return nil, false, err
	}
	if err != nil {
		if isCorrupt(err) {
			return nil, false, fmt.Errorf("database %s is corrupt or is not a SQLite database (%w); refusing to run on it: restore it from a backup, or move it aside to start afresh", path, err)
		}
		return nil, false, fmt.Errorf("open %s: %w", path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, false, fmt.Errorf("open %s: %w", path, err)
		}
		ours = ours || name == versionTable
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("open %s: %w", path, err)
	}
	return tables, ours, nil
}

// versionTable is where goose records the migrations applied.
const versionTable = "goose_db_version"

// applicationID is "TSKD", which migration 00007 writes into the header.
const applicationID = 0x54534B44

// checkFile returns tasksessiond.ErrVanished once the file at the database's path is
// not the one this daemon opened (same device and inode), and says so in
// the log the first time. A stat a commit: cheap beside its fsync.
func (d *DB) checkFile() error {
	if why := d.gone.Load(); why != nil {
		return fmt.Errorf("%w: %s", tasksessiond.ErrVanished, *why)
	}
	if d.key == "" {
		return nil // a platform without inodes: nothing to compare
	}
	key, ok := fileKey(d.path)
	if ok && key == d.key {
		return nil
	}
	why := d.path + " was deleted, moved or replaced while the daemon had it open; writes are refused so that none is lost: restore the file (or move it back) and restart the daemon"
	if d.gone.CompareAndSwap(nil, &why) {
		d.log.Error("the database file is gone; refusing writes", slog.String("database", d.path))
	}
	return fmt.Errorf("%w: %s", tasksessiond.ErrVanished, why)
}

// Problem says what is wrong with the database as a whole ("" when
// nothing is): for daemon/status.
func (d *DB) Problem() string {
	if err := d.checkFile(); err != nil {
		return err.Error()
	}
	return d.schema
}
