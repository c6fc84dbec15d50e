//go:build unix

package db

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ErrLocked means another process has the database open for writing.
var ErrLocked = errors.New("database in use")

// lockFile locks the database file itself (flock, beside SQLite's own
// fcntl locks, which it does not touch), so that one process at a time
// writes it: exactly-once by callId is kept in that process's memory. A
// lock on the file, not on a name beside it, holds whatever path names the
// file (a symlink, a hard link, a relative path), and creates nothing. The
// kernel drops the lock when the process dies, so a daemon killed with
// SIGKILL leaves nothing to clean up. The file must stay open until the
// database is closed: closing any descriptor of it would drop SQLite's
// locks too.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s to lock it: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := lockHolder(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is open for writing by another process%s; one daemon serves a database at a time", ErrLocked, path, holder)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// lockHolder names the process holding a flock on f, where /proc/locks
// tells (" (pid N)"), else "".
func lockHolder(f *os.File) string {
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	pid := ""
	eachLock(fi, func(l lockLine) bool {
		if l.class == "FLOCK" {
			pid = l.pid
		}
		return pid == ""
	})
	if pid == "" {
		return ""
	}
	return " (pid " + pid + ")"
}

// walWriteLock is the byte of the -shm file whose POSIX write lock is
// SQLite's write lock in WAL mode (WAL_WRITE_LOCK at UNIX_SHM_BASE, 120).
const walWriteLock = "120"

// writeLockHolder names the process holding SQLite's write lock on the
// database at path ("pid 1234, sqlite3"), where /proc/locks tells, else "".
func writeLockHolder(path string) string {
	fi, err := os.Stat(path + "-shm")
	if err != nil {
		return ""
	}
	self := strconv.Itoa(os.Getpid())
	pid := ""
	eachLock(fi, func(l lockLine) bool {
		if l.class == "POSIX" && l.kind == "WRITE" && l.start == walWriteLock && l.pid != self {
			pid = l.pid
		}
		return pid == ""
	})
	if pid == "" {
		return ""
	}
	if comm, err := os.ReadFile("/proc/" + pid + "/comm"); err == nil {
		return "pid " + pid + ", " + strings.TrimSpace(string(comm))
	}
	return "pid " + pid
}

// lockLine is one lock of /proc/locks:
// "1: POSIX  ADVISORY  WRITE 1234 fd:01:5678 120 120".
type lockLine struct{ class, kind, pid, start string }

// eachLock calls fn with each lock held on the file fi (not those waited
// for) until fn returns false. Where there is no /proc/locks, it does not.
func eachLock(fi os.FileInfo, fn func(lockLine) bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return
	}
	ino := ":" + strconv.FormatUint(uint64(st.Ino), 10)
	for line := range strings.SplitSeq(string(b), "\n") {
		fs := strings.Fields(line)
		if len(fs) < 7 || fs[1] == "->" || !strings.HasSuffix(fs[5], ino) {
			continue
		}
		if !fn(lockLine{class: fs[1], kind: fs[3], pid: fs[4], start: fs[6]}) {
			return
		}
	}
}

// fileKey names the file at path by device and inode, whatever path
// names it.
func fileKey(path string) (string, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return strconv.FormatUint(uint64(st.Dev), 10) + ":" + strconv.FormatUint(st.Ino, 10), true
}
