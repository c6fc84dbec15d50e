package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Change is one file setup writes: its bytes before (nil: no file) and
// after (nil: remove it), and how the host reads it, to check the result
// before it replaces the original.
type Change struct {
	Path     string
	Old, New []byte
	Mode     fs.FileMode // of a file made new (an existing one keeps its own)
	// Check reads the new bytes as the host will; nil for a file the
	// host does not parse (the OpenCode plugin).
	Check func([]byte) error
	// NoBackup keeps no copy of the old bytes: they are not the user's
	// original (setup's record, a file set up already, an uninstall).
	NoBackup bool
}

// Changed reports whether the change changes anything.
func (c Change) Changed() bool {
	return !bytes.Equal(c.Old, c.New) || (c.Old == nil) != (c.New == nil)
}

// BackupSuffix names the copy of a file as it was before setup last
// changed it.
const BackupSuffix = ".tasksessiond-backup"

// Read returns a file's bytes, nil when there is none. A link to nothing
// (dotfiles not there) is an error: writing would replace the link.
func Read(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			to, _ := os.Readlink(path)
			return nil, fmt.Errorf("a link to %s, which is not there: make the file it points to, or remove the link", to)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// Ready is an error when the change could not be made: the file is
// read-only, its directory cannot be made or written, or the new bytes are
// not read by the host. Setup checks every change so before it writes the
// first: several files are changed all or none.
func Ready(c Change) error {
	if !c.Changed() {
		return nil
	}
	path := c.Path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("%s is read-only (mode %v): setup leaves it; make it writable to go on", c.Path, st.Mode().Perm())
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	for ; err != nil && dir != filepath.Dir(dir); st, err = os.Stat(dir) {
		if lst, lerr := os.Lstat(dir); lerr == nil && lst.Mode()&fs.ModeSymlink != 0 {
			// a link to nothing: no directory can be made there
			to, _ := os.Readlink(dir)
			return fmt.Errorf("%s: %s is a link to %s, which is not there: make the directory it points to, or remove the link", c.Path, dir, to)
		}
		dir = filepath.Dir(dir) // the first that is there
	}
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", c.Path, err)
	case !st.IsDir():
		return fmt.Errorf("%s: %s is not a directory", c.Path, dir)
	}
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return fmt.Errorf("%s: cannot write in %s: %w", c.Path, dir, err)
	}
	if c.Check != nil && c.New != nil {
		if err := c.Check(c.New); err != nil {
			return fmt.Errorf("%s: the new file would not be read by the host (%v)", c.Path, err)
		}
	}
	return nil
}

// Apply makes the change: the new bytes go to a temporary file beside the
// original, are read back and checked as the host reads them, the
// original is copied to path+BackupSuffix, and the temporary file is
// renamed over it. A file that changed since it was read is left alone.
// A file that is a symbolic link (dotfiles kept elsewhere) is written
// where it points, the link kept. A backup that the change makes needless
// goes: the file is back as the backup holds it, or the file is removed
// (only a file setup made, or holds nothing of the user's, is).
func Apply(c Change) error {
	if !c.Changed() {
		return nil
	}
	if err := c.unchanged(); err != nil {
		return err
	}
	backup := c.Path + BackupSuffix
	kept, _ := Read(backup)
	done := kept != nil && (c.New == nil || bytes.Equal(kept, c.New))
	if c.Old != nil && !c.NoBackup && c.New != nil && !done {
		if err := writeChecked(Change{Path: backup, New: c.Old}, 0o600, false); err != nil {
			return fmt.Errorf("%s: keep a backup: %w", c.Path, err)
		}
	}
	if c.New == nil {
		if err := os.Remove(c.Path); err != nil {
			return fmt.Errorf("%s: %w", c.Path, err)
		}
	} else if err := c.write(); err != nil {
		return err
	}
	if done {
		os.Remove(backup) // its work done; a backup left is no harm
	}
	return nil
}

// write writes c.New to c.Path (where it points, when it is a link),
// keeping the file's mode.
func (c Change) write() error {
	mode := c.Mode
	if st, err := os.Stat(c.Path); err == nil {
		mode = st.Mode().Perm()
	}
	w := c
	if real, err := filepath.EvalSymlinks(c.Path); err == nil {
		w.Path = real
	}
	if err := os.MkdirAll(filepath.Dir(w.Path), 0o755); err != nil {
		return fmt.Errorf("%s: %w", c.Path, err)
	}
	return writeChecked(w, cmp.Or(mode, 0o600), true)
}

// unchanged is an error when the file no longer holds the bytes the
// change was made from: a host wrote it while setup ran (a host may
// rewrite its state file as it runs), and what it wrote would be lost.
func (c Change) unchanged() error {
	same, err := holds(c.Path, c.Old)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Path, err)
	}
	if !same {
		return fmt.Errorf("%s: changed while setup ran; nothing was written, run it again", c.Path)
	}
	return nil
}

// writeChecked writes c.New beside c.Path, reads it back, checks it and
// renames it over c.Path; guard checks again just before the rename that
// the file is as read, which leaves a host's write a window of a rename.
func writeChecked(c Change, mode fs.FileMode, guard bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(c.Path), "."+filepath.Base(c.Path)+".tasksessiond-*")
	if err != nil {
		return fmt.Errorf("%s: %w", c.Path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(c.New)
	if err = errors.Join(err, tmp.Chmod(mode), tmp.Sync(), tmp.Close()); err != nil {
		return fmt.Errorf("%s: write: %w", c.Path, err)
	}
	same, err := holds(tmp.Name(), c.New)
	if err != nil {
		return fmt.Errorf("%s: read back: %w", c.Path, err)
	}
	if !same {
		return fmt.Errorf("%s: the file written reads back otherwise; nothing was changed", c.Path)
	}
	if c.Check != nil {
		if err := c.Check(c.New); err != nil {
			return fmt.Errorf("%s: the new file would not be read by the host (%v); nothing was changed", c.Path, err)
		}
	}
	if guard {
		if err := c.unchanged(); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp.Name(), c.Path); err != nil {
		return fmt.Errorf("%s: %w", c.Path, err)
	}
	return nil
}

// holds reports whether the file at path holds b (nil: is not there),
// reading it a piece at a time: a large file is not held twice.
func holds(path string, b []byte) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := Read(path); err != nil {
			return false, err // a link to nothing
		}
		return b == nil, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	if b == nil {
		return false, nil
	}
	buf := make([]byte, 1<<20)
	for {
		n, err := io.ReadFull(f, buf)
		if n > len(b) || !bytes.Equal(buf[:n], b[:n]) {
			return false, nil
		}
		b = b[n:]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return len(b) == 0, nil
		}
		if err != nil {
			return false, err
		}
	}
}
