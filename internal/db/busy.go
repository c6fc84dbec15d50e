package db

import (
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tasksessiond/tasksessiond"
)

// lockedOut turns a write that gave up waiting for SQLite's write lock
// into a tasksessiond.LockedError naming who holds it, where that can be
// told; any other error is returned as it is. Only another process can
// hold the lock: this one writes through a single connection.
func (d *DB) lockedOut(err error) error {
	var se *sqlite.Error
	if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY {
		return err
	}
	return &tasksessiond.LockedError{Holder: writeLockHolder(d.path), Err: err}
}
