// Package paths finds the default database and socket locations (XDG base
// directories, with fallbacks) and applies the environment overrides.
package paths

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Environment variables that override the defaults.
const (
	EnvDB     = "TASKSESSIOND_DB"
	EnvSocket = "TASKSESSIOND_SOCKET"
)

// DB is the database path: $TASKSESSIOND_DB, else
// $XDG_STATE_HOME/tasksessiond/tasksessiond.db, else
// ~/.local/state/tasksessiond/tasksessiond.db.
func DB() string {
	if p := os.Getenv(EnvDB); p != "" {
		return p
	}
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "tasksessiond", "tasksessiond.db")
}

// Socket is the socket path: $TASKSESSIOND_SOCKET, else
// $XDG_RUNTIME_DIR/tasksessiond/tasksessiond.sock, else
// /tmp/tasksessiond-UID/tasksessiond.sock.
func Socket() string {
	if p := os.Getenv(EnvSocket); p != "" {
		return p
	}
	if run := os.Getenv("XDG_RUNTIME_DIR"); run != "" {
		return filepath.Join(run, "tasksessiond", "tasksessiond.sock")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("tasksessiond-%d", os.Getuid()), "tasksessiond.sock")
}

// Owner returns the uid that owns the file fi describes (false where the
// system does not say).
func Owner(fi os.FileInfo) (int, bool) { return owner(fi) }

// Private checks that dir is a directory of this user's that no one else
// can enter: the socket, the daemon's log and the bindings live there.
func Private(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("check directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (a symlink?); refusing to use it", dir)
	}
	if uid, ok := owner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("directory %s belongs to uid %d, not to this user (uid %d); refusing to use it: choose a --socket in a directory of your own", dir, uid, os.Getuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("directory %s has mode %#o, open to other users; refusing to use it: chmod 700 it, or choose a --socket in a private directory (the default is)", dir, perm)
	}
	return nil
}

// PrivateIfExists is Private for a directory that exists; a missing one
// passes (it is made 0700 when it is needed).
func PrivateIfExists(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return Private(dir)
}
