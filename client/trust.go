package client

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"

	"github.com/tasksessiond/tasksessiond/internal/paths"
	"github.com/tasksessiond/tasksessiond/internal/peercred"
)

// ErrUntrusted is returned by Dial when whatever listens on the socket may
// not be this user's daemon: the socket's directory is another user's or
// open to other users, or the process listening runs as another user.
// Nothing is sent to it. Compare with errors.Is.
var ErrUntrusted = errors.New("refused: it may be another user posing as the daemon, so nothing was sent to it")

// checkDir refuses a socket whose directory someone else owns or can
// write to: whoever can, can listen there in the daemon's place. A missing
// directory is left to the dial, which finds no daemon.
func checkDir(socket string) error {
	dir := filepath.Dir(socket)
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("connect to tasksessiond at %s: check its directory: %w", socket, err)
	case !fi.IsDir():
		err = fmt.Errorf("%s is not a directory (a symlink?)", dir)
	default:
		if uid, ok := paths.Owner(fi); ok && uid != os.Getuid() {
			err = fmt.Errorf("directory %s belongs to uid %d, not to this user (uid %d)", dir, uid, os.Getuid())
		} else if perm := fi.Mode().Perm(); perm&0o022 != 0 {
			err = fmt.Errorf("directory %s has mode %#o: other users can write to it", dir, perm)
		}
	}
	if err != nil {
		return fmt.Errorf("connect to tasksessiond at %s: %w: %w; choose a --socket (or %s) in a private directory of your own", socket, ErrUntrusted, err, paths.EnvSocket)
	}
	return nil
}

// checkPeer refuses a connection whose listener runs as another user.
func checkPeer(socket string, nc net.Conn) error {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("connect to tasksessiond at %s: %w: not a Unix socket connection", socket, ErrUntrusted)
	}
	uid, err := peercred.UID(uc)
	if err != nil {
		return fmt.Errorf("connect to tasksessiond at %s: %w: cannot tell the user listening there (%v)", socket, ErrUntrusted, err)
	}
	if uid != os.Getuid() {
		return fmt.Errorf("connect to tasksessiond at %s: %w: the process listening there runs as uid %d, not as this user (uid %d); "+
			"stop it, or choose a --socket (or %s) in a directory of your own", socket, ErrUntrusted, uid, os.Getuid(), paths.EnvSocket)
	}
	return nil
}
