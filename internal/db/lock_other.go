//go:build !unix

package db

import (
	"errors"
	"os"
)

// ErrLocked means another process has the database open for writing.
var ErrLocked = errors.New("database in use")

// lockFile opens the database file and keeps it open; without flock the
// socket check is the only guard against a second daemon.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR, 0)
}

func fileKey(string) (string, bool) { return "", false }

func writeLockHolder(string) string { return "" }
