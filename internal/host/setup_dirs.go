package host

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// dirs records, setting up, the directories setup is about to make for
// the files it writes, its record's too, as files it made. Uninstalling,
// it plans to remove those on the way to the files the plan takes away
// that it leaves empty, deepest first; one that holds something else
// stays recorded.
func (p *Plan) dirs() {
	sep, record := string(filepath.Separator), recordKey(p.o.RecordFile())
	if !p.o.Uninstall {
		made := func(file string) {
			for d := filepath.Dir(file); notThere(d); d = filepath.Dir(d) {
				p.first(Edit{File: d, Path: []string{}})
			}
		}
		for _, c := range p.Changes {
			if c.Old == nil && c.New != nil {
				made(recordKey(c.Path))
			}
		}
		made(record)
		return
	}
	gone := map[string]bool{} // what is not there once the changes are made
	for _, c := range p.Changes {
		if c.New == nil {
			name := filepath.Join(recordKey(filepath.Dir(c.Path)), filepath.Base(c.Path))
			gone[name], gone[name+config.BackupSuffix] = true, true
		}
	}
	p.emptyDirs(gone)
	// The record goes when it holds nothing but its own directories; one
	// that holds the user's since (~/.local/bin beside) stays theirs, for
	// no record is left to keep it.
	own := func(e Edit) bool { return strings.HasPrefix(record, e.File+sep) }
	if !slices.ContainsFunc(p.rec, func(e Edit) bool { return !own(e) }) {
		gone[record] = true
		p.emptyDirs(gone)
		p.rec = slices.DeleteFunc(p.rec, own)
	}
}

// emptyDirs plans to remove the directories setup made on the way to what
// is gone that hold nothing else, deepest first, and forgets them.
func (p *Plan) emptyDirs(gone map[string]bool) {
	var made []string
	for _, e := range p.rec {
		for name := range gone {
			if len(e.Path) == 0 && strings.HasPrefix(name, e.File+string(filepath.Separator)) {
				made = append(made, e.File)
				break
			}
		}
	}
	slices.SortFunc(made, func(a, b string) int { return len(b) - len(a) })
	for _, d := range made {
		entries, err := os.ReadDir(d)
		if err != nil && !errors.Is(err, fs.ErrNotExist) || slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return !gone[filepath.Join(d, e.Name())] }) {
			continue
		}
		gone[d] = true
		p.forget(d, nil)
		p.rmdirs = append(p.rmdirs, d)
		p.Step("remove the directory %s, which setup made", d)
	}
}

// notThere reports whether nothing is at path.
func notThere(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}
