package server

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/tasksessiond/tasksessiond/internal/paths"
)

// ErrSocketInUse means a live daemon answers on the socket path.
var ErrSocketInUse = errors.New("socket in use")

// CheckSocket reports ErrSocketInUse when a daemon answers on path, so that
// a second daemon can stop before it creates anything (a database file
// among others). Listen checks again, as a daemon may start in between.
func CheckSocket(path string) error {
	// The kernel takes a socket path of at most 107 bytes (103 on the BSDs
	// and macOS); past it, bind fails with "invalid argument". Say so
	// before anything is created.
	if len(path) > maxSocketPath {
		return fmt.Errorf("socket path %s is %d bytes; Unix socket paths are limited to %d: choose a shorter --socket (or TASKSESSIOND_SOCKET)", path, len(path), maxSocketPath)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("%w: a daemon is already serving on %s (stop it, or choose another --socket)", ErrSocketInUse, path)
	}
	return nil
}

// maxSocketPath is the longest socket path every Unix we build for takes.
const maxSocketPath = 103

// listen opens the Unix socket at path carefully: it creates a missing
// directory 0700, refuses a directory that others can enter or that another
// user owns, refuses a symlink or a non-socket file, refuses when a live
// daemon answers there, removes a stale socket, and sets the socket to 0600.
func listen(path string) (*net.UnixListener, error) {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create socket directory: %w", err)
		}
	}
	if err := paths.Private(dir); err != nil {
		return nil, err
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("check socket %s: %w", path, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("socket path %s is a symlink; refusing to use it", path)
	case fi.Mode()&fs.ModeSocket == 0:
		return nil, fmt.Errorf("socket path %s exists and is not a socket; refusing to replace it", path)
	default:
		if err := CheckSocket(path); err != nil {
			return nil, err
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket %s: %w", path, err)
		}
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod socket %s: %w", path, err)
	}
	return ln, nil
}
