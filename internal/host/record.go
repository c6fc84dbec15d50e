package host

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// Record is what setup changed of the user's, an edit a line, so that
// --uninstall takes back exactly that. Setup's own servers, files and
// blocks are not in it: they are known by what they run. The hook groups
// it appends are, for a group the user wrote by hand runs what setup's
// does.
type Record []Edit

// Edit is one change setup made at Path in File (Path [] is the file
// itself): Added, the string it appended to the array there (for a hook
// group, the command of its hook: ownHook), or else Was,
// the text that was there as the user wrote it (nil: nothing, for a file,
// a container or a value setup made). A file setup found empty keeps its
// bytes in Was, and so does an empty container of the user's that setup
// put something in: set up, nothing else shows how they were laid out.
// A directory setup made for a file it wrote is recorded as a file it
// made.
type Edit struct {
	File  string   `json:"file"`
	Path  []string `json:"path"`
	Added string   `json:"added,omitempty"`
	Was   *string  `json:"was,omitempty"`
}

// ErrRecord wraps a record that cannot be read.
var ErrRecord = errors.New("setup's record cannot be read")

// RecordFile is where setup keeps its record: under HOME whatever
// $XDG_STATE_HOME says, for a setup from a shell that sets it and an
// uninstall from one that does not (an IDE's terminal) must find one record.
func (o Options) RecordFile() string {
	return filepath.Join(o.Home(), ".local", "state", "tasksessiond", "setup.json")
}

// readRecord reads setup's record and its bytes. One that cannot be read
// is an error, never an empty record: uninstall would take the user's own
// values too.
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

// encode writes r an edit a line, by file and path; nil (no record file) when empty.
func (r Record) encode() []byte {
	if len(r) == 0 {
		return nil
	}
	r = slices.Clone(r)
	slices.SortFunc(r, func(a, b Edit) int {
		return cmp.Or(strings.Compare(a.File, b.File), slices.Compare(a.Path, b.Path), strings.Compare(a.Added, b.Added))
	})
	lines := make([]string, len(r))
	for i, e := range r {
		e.Path = append([]string{}, e.Path...) // [], not null
		b, _ := json.Marshal(e)
		lines[i] = string(b)
	}
	return []byte("[\n  " + strings.Join(lines, ",\n  ") + "\n]\n")
}

// find is the index of file's edit at path that added added ("": a
// value's), or -1.
func (r Record) find(file string, path []string, added string) int {
	return slices.IndexFunc(r, func(e Edit) bool { return e.File == file && slices.Equal(e.Path, path) && e.Added == added })
}

// recordKey names file by its real path (HOME or a project reached
// through a link is one file), resolving the deepest directory on its way
// that is there (setup may be about to make the rest).
func recordKey(file string) string {
	abs, err := filepath.Abs(file)
	for dir, rest := abs, ""; err == nil; dir, rest = filepath.Dir(dir), filepath.Join(filepath.Base(dir), rest) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	return abs
}

// take removes the file's edit at path that added added ("": a value's)
// from the record and returns it; false when there is none.
func (f *jsonFile) take(path []string, added string) (Edit, bool) {
	i := f.rec.find(f.file, path, added)
	if i < 0 {
		return Edit{}, false
	}
	e := f.rec[i]
	f.rec = slices.Delete(f.rec, i, i+1)
	return e, true
}

// forget drops file's edits that match (all, for nil).
func (p *Plan) forget(file string, match func(Edit) bool) {
	p.rec = slices.DeleteFunc(p.rec, func(e Edit) bool { return e.File == file && (match == nil || match(e)) })
}

// keep is how many of path's names uninstall leaves though what it takes
// out empties them: all, for each container setup made is recorded and
// goes once empty (settle); none in a file the record does not know
// (setup's own were likely all it held there).
func (f *jsonFile) keep(path []string) int {
	if f.known {
		return len(path)
	}
	return 0
}

// made records, setting up, each name of path that d lacks, which setup
// is about to make (in a file it made too: while the name holds
// something, the record of the file stays), and an empty container of
// the user's that setup is about to put something in, when written other
// than as {} or [], for uninstall to give back its layout.
func (f *jsonFile) made(path []string) {
	n := f.d.Depth(path)
	if n > 0 && f.d.Hollow(path[:n]) {
		if raw := string(f.d.Raw(path[:n])); raw != "{}" && raw != "[]" {
			f.first(Edit{File: f.file, Path: path[:n], Was: &raw})
		}
	}
	for n++; n <= len(path); n++ {
		f.first(Edit{File: f.file, Path: path[:n]})
	}
}

// first records e unless the record has its edit already: what was there
// before the first setup is what uninstall gives back.
func (p *Plan) first(e Edit) {
	if p.rec.find(e.File, e.Path, e.Added) < 0 {
		p.rec = append(p.rec, e)
	}
}

// found records, setting up, a file setup found not there (old nil) or
// empty, in place of what the record said of it before.
func (p *Plan) found(file string, old []byte, empty bool) {
	if p.o.Uninstall || old != nil && !empty {
		return
	}
	p.forget(file, nil)
	e := Edit{File: file, Path: []string{}}
	if old != nil {
		was := string(old)
		e.Was = &was
	}
	p.rec = append(p.rec, e)
}

// emptied is what becomes of a file left holding nothing (as empty): not
// there when setup made it, its bytes as found when it found it empty,
// else empty, as the user emptied it.
func (p *Plan) emptied(file string, empty []byte) []byte {
	i := p.rec.find(file, []string{}, "")
	if i < 0 {
		return empty
	}
	was := p.rec[i].Was
	p.forget(file, nil)
	if was == nil {
		return nil
	}
	return []byte(*was)
}
