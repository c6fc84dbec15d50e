package daemon

import (
	"context"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/pgdb"
)

// storage is a database the daemon runs on: SQLite (package db) or, in
// fleet mode, PostgreSQL (package pgdb).
type storage interface {
	tasksessiond.Storage
	Path() string
	Close() error
}

// openStorage opens cfg.DB: a postgres:// (or postgresql://) URL is a
// PostgreSQL database shared by a fleet of daemons, anything else a SQLite
// file of this daemon's own.
func openStorage(ctx context.Context, cfg Config) (storage, error) {
	if pgdb.IsURL(cfg.DB) {
		return pgdb.Open(ctx, cfg.DB, pgdb.Options{Lease: cfg.Lease, Logger: cfg.Logger})
	}
	return db.Open(ctx, cfg.DB, db.Options{Sync: cfg.Sync, MaxBytes: cfg.MaxDBBytes, Logger: cfg.Logger})
}
