package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// Record is what setup changed of the user's, so that --uninstall takes
// back exactly that: a flat list, an edit a line. Setup's own servers,
// hooks, files and blocks are not in it: they are setup's by what they
// run.
type Record []Edit

// Edit is one change setup made at Path in File: Added, the string it
// appended to the array there, or else Was, what was there before setup
// set it (nil: nothing). A file or a container setup made is a value that
// was absent: its path is the first name setup created ([] for the file).
// A file setup found empty has Path [] and Was its bytes, as a JSON
// string.
type Edit struct {
	File  string          `json:"file"`
	Path  []string        `json:"path"`
	Added string          `json:"added,omitempty"`
	Was   json.RawMessage `json:"was,omitempty"`
}

// ErrRecord wraps a record that cannot be read.
var ErrRecord = errors.New("setup's record cannot be read")

// RecordFile is where setup keeps its record: under HOME,
// ~/.local/state/tasksessiond/setup.json, whatever $XDG_STATE_HOME says:
// a setup from a shell that sets it and an uninstall from one that does
// not (an IDE's terminal) must find the same record.
func (o Options) RecordFile() string {
	return filepath.Join(o.Home(), ".local", "state", "tasksessiond", "setup.json")
}

// readRecord reads setup's record and its bytes. A record that cannot be
// read is an error, never an empty record: uninstall would then take the
// user's own values too.
func readRecord(o Options) (Record, []byte, error) {
	var rec Record
	b, err := config.Read(o.RecordFile())
	if err == nil && b != nil {
		err = json.Unmarshal(b, &rec)
	}
	if err == nil && slices.ContainsFunc(rec, func(e Edit) bool { return e.File == "" }) {
		err = errors.New("an edit names no file")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s (%v): move it aside to go on; --uninstall then also removes values you had set like setup's", ErrRecord, o.RecordFile(), err)
	}
	return rec, b, nil
}

// encode writes r an edit a line, by file; nil when r is empty (the
// record file goes).
func (r Record) encode() []byte {
	if len(r) == 0 {
		return nil
	}
	r = slices.Clone(r)
	slices.SortStableFunc(r, func(a, b Edit) int { return strings.Compare(a.File, b.File) })
	b := []byte("[")
	for i, e := range r {
		if e.Path == nil {
			e.Path = []string{}
		}
		if i > 0 {
			b = append(b, ',')
		}
		line, _ := json.Marshal(e)
		b = append(append(b, "\n  "...), line...)
	}
	return append(b, "\n]\n"...)
}

// find is the index of the edit of file at path with added (-1: none);
// added "" finds a value's edit.
func (r Record) find(file string, path []string, added string) int {
	return slices.IndexFunc(r, func(e Edit) bool { return e.File == file && slices.Equal(e.Path, path) && e.Added == added })
}

// recordKey names file by its real path (HOME or a project reached
// through a link is the same file), resolving the deepest directory on its
// way that is there (setup may be about to make the rest).
func recordKey(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return file
	}
	for dir, rest := abs, ""; ; dir, rest = filepath.Dir(dir), filepath.Join(filepath.Base(dir), rest) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == filepath.Dir(dir) {
			return abs
		}
	}
}

// set records e in place of the edit at its path (or beside it).
func (p *Plan) set(e Edit) {
	if i := p.rec.find(e.File, e.Path, e.Added); i >= 0 {
		p.rec[i] = e
		return
	}
	p.rec = append(p.rec, e)
}

// forget drops file's edits that match (all, for nil).
func (p *Plan) forget(file string, match func(Edit) bool) {
	p.rec = slices.DeleteFunc(p.rec, func(e Edit) bool { return e.File == file && (match == nil || match(e)) })
}

// knows reports whether the record has an edit of file.
func (p *Plan) knows(file string) bool {
	return slices.ContainsFunc(p.rec, func(e Edit) bool { return e.File == file })
}

// had is how many of path's names in file were the user's, which
// uninstall leaves though empty: those before the first name the record
// says setup made; all of them when it says setup made none, and none in
// a file it does not know (setup's own were likely all it held there).
func (p *Plan) had(file string, path []string, known bool) int {
	if !known {
		return 0
	}
	for n := range len(path) + 1 {
		if i := p.rec.find(file, path[:n], ""); i >= 0 && (n == 0 || p.rec[i].Was == nil) {
			return max(n-1, 0)
		}
	}
	return len(path)
}

// made records, setting up, the first name of path that d lacks, which
// setup is about to make, unless the record has it made already.
func (p *Plan) made(file string, d *config.Doc, path []string) {
	n := d.Depth(path)
	if n < len(path) && p.had(file, path[:n+1], true) > n {
		p.rec = append(p.rec, Edit{File: file, Path: path[:n+1]})
	}
}

// found notes, setting up, the file as setup found it: not there (old
// nil) or empty. What the record said of it before is then no longer so.
func (p *Plan) found(file string, old []byte, empty bool) {
	if p.o.Uninstall || old != nil && !empty {
		return
	}
	p.forget(file, nil)
	e := Edit{File: file, Path: []string{}}
	if old != nil {
		e.Was, _ = json.Marshal(string(old))
	}
	p.rec = append(p.rec, e)
}

// emptied is what becomes of a file left holding nothing (as empty): not
// there, when setup made it; its bytes as found, when setup found it
// empty; else empty, as the user emptied it.
func (p *Plan) emptied(file string, empty []byte) []byte {
	i := p.rec.find(file, []string{}, "")
	if i < 0 {
		return empty
	}
	var was *string
	json.Unmarshal(p.rec[i].Was, &was)
	p.forget(file, nil)
	if was == nil {
		return nil
	}
	return []byte(*was)
}

func compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
