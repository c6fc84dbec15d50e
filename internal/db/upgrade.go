package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/tasksessiond/tasksessiond/migrations"
)

// KnownSchema is the newest schema this binary's migrations make.
func KnownSchema() int64 {
	names, _ := fs.Glob(migrations.FS, "*.sql")
	var top int64
	for _, name := range names {
		digits, _, _ := strings.Cut(name, "_")
		if v, err := strconv.ParseInt(digits, 10, 64); err == nil && v > top {
			top = v
		}
	}
	return top
}

// schemaOf is the schema the database is at (0: none yet), read from
// goose's table.
func schemaOf(ctx context.Context, q querier) (int64, error) {
	var exists bool
	if err := q.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?)`, versionTable); err != nil {
		return 0, fmt.Errorf("read the schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v sql.NullInt64
	if err := q.GetContext(ctx, &v, `SELECT max(version_id) FROM `+versionTable+` WHERE is_applied`); err != nil {
		return 0, fmt.Errorf("read the schema version: %w", err)
	}
	return v.Int64, nil
}

// refuseNewer refuses a database a newer binary has upgraded: this one
// would misread it (its queries name tables that are gone).
func refuseNewer(ctx context.Context, path string, q querier) error {
	v, err := schemaOf(ctx, q)
	if err != nil {
		return err
	}
	if known := KnownSchema(); v > known {
		return fmt.Errorf("database %s is schema %d, this binary knows up to %d: upgrade tasksessiond (the database is left as it is)", path, v, known)
	}
	return nil
}

// migrate brings the database to KnownSchema. An upgrade of a database
// that has data says before it starts how much room it needs and refuses
// when the disk or the --max-db-size cap would not hold it (a migration
// that copies a table grows the file by about its size, and its WAL holds
// the copy until it is checkpointed), then logs each migration as it is
// applied: a large log takes seconds.
func (d *DB) migrate(ctx context.Context, maxBytes int64) error {
	if err := refuseNewer(ctx, d.path, d.w); err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, d.w.DB, migrations.FS)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	from, err := schemaOf(ctx, d.w)
	if err != nil {
		return err
	}
	to := KnownSchema()
	if from < to && !d.upgrade {
		return &OlderSchemaError{Path: d.path, Schema: from, Known: to}
	}
	if from == 0 || from == to {
		applied, err := p.Up(ctx) // a new database: nothing to copy
		if err != nil {
			return migrateError(d.path, err)
		}
		if len(applied) > 0 {
			d.checkpointAfterMigrations(ctx)
		}
		return nil
	}
	size := fileSize(d.path) + fileSize(d.path+"-wal")
	need := int64(0)
	if copies(from) {
		need = 2 * size
	}
	log := d.log.With(slog.String("database", d.path), slog.Int64("from", from), slog.Int64("to", to))
	log.Info("upgrading the database", slog.Int64("bytes", size), slog.Int64("needsUpToBytes", need))
	if need > 0 && maxBytes > 0 && size+need/2 > maxBytes {
		return fmt.Errorf("upgrading %s from schema %d to %d may grow it from %d to about %d bytes, past --max-db-size %d: raise the cap for the upgrade (the database is left as it is)",
			d.path, from, to, size, size+need/2, maxBytes)
	}
	if free, ok := freeBytes(filepath.Dir(d.path)); ok && need > free {
		return fmt.Errorf("upgrading %s from schema %d to %d needs up to %d bytes free on its disk, which has %d: make room (the database is left as it is)",
			d.path, from, to, need, free)
	}
	start := time.Now()
	for {
		t := time.Now()
		res, err := p.UpByOne(ctx)
		if errors.Is(err, goose.ErrNoNextVersion) {
			break
		}
		if err != nil {
			return migrateError(d.path, err)
		}
		log.Info("upgraded", slog.Int64("schema", res.Source.Version), slog.Duration("took", time.Since(t)))
	}
	d.checkpointAfterMigrations(ctx)
	log.Info("upgrade done", slog.Duration("took", time.Since(start)), slog.Int64("bytes", fileSize(d.path)))
	return nil
}

// copies reports whether a migration past schema from copies or rewrites
// a table of data (the ones that rebuild the log insert its rows into a
// new one; 14 rewrites every row with its checksum). Copying log_heads, a
// row a session, does not count: 15 remakes it, and must not ask a large
// database for twice its size.
func copies(from int64) bool {
	names, _ := fs.Glob(migrations.FS, "*.sql")
	for _, name := range names {
		digits, _, _ := strings.Cut(name, "_")
		v, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || v <= from {
			continue
		}
		text, _ := fs.ReadFile(migrations.FS, name)
		up, _, _ := strings.Cut(string(text), "-- +goose Down")
		for _, line := range strings.Split(up, "\n") {
			line = strings.TrimSpace(line)
			if (strings.HasPrefix(line, "INSERT INTO ") && !strings.HasPrefix(line, "INSERT INTO log_heads")) || strings.HasPrefix(line, "UPDATE tool_calls ") {
				return true
			}
		}
	}
	return false
}

// checkpointAfterMigrations starts from an empty WAL rather than carry a
// migration's rewrite of whole tables into the first commits' checkpoints.
func (d *DB) checkpointAfterMigrations(ctx context.Context) {
	if _, err := d.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		d.log.Warn("checkpointing after the migrations failed", slog.Any("err", err))
	}
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
