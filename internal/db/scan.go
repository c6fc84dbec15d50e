package db

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/tasksessiond/tasksessiond/internal/sqlscan"
)

// A row is scanned straight into the domain's types (tasksessiond.Session,
// Call), with package sqlscan's wrappers and this one for SQLite's times.

// textTime is a time column, written by formatTime.
type textTime time.Time

func (t *textTime) Scan(v any) error {
	s, err := sqlscan.Text(v)
	if err != nil {
		return err
	}
	at, err := time.Parse(timeFormat, s)
	if err != nil {
		// Written by someone else (the sqlite3 shell, say): reported.
		return fmt.Errorf("%q is not a time in the form %s: %w", s, timeFormat, err)
	}
	*t = textTime(at)
	return nil
}

// nullInt is an integer column that may be NULL (read as 0).
type nullInt int64

func (n *nullInt) Scan(v any) error {
	var x sql.NullInt64
	if err := x.Scan(v); err != nil {
		return err
	}
	*n = nullInt(x.Int64)
	return nil
}
