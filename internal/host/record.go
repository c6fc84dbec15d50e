package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// What setup changed in a user's own settings (a deny rule, a host's own
// to-do tool turned off) is recorded, so that --uninstall takes back
// exactly that: a value the user had already is left to them, and one
// setup changed is put back as it was. Servers, hooks and Codex's block
// need no record: they are setup's by what they run.

// Record is setup's record, by file (its absolute path): what setup
// changed there. On disk it is a flat list, an edit a line, each naming
// its file.
type Record map[string][]Edit

// Edit is one change setup made at Path: Added, the string it appended to
// the array there; or Was, what the member held before setup set it
// (absent: no member); or neither, that it added something of its own
// there (a server, a hook), Had saying what of the path was the user's.
// An edit without a path is the file's own: setup Made it, or found it
// Empty (uninstall leaving it empty puts these bytes back), or, neither,
// found it with the user's own in it.
type Edit struct {
	File  string          `json:"file,omitempty"` // on disk only
	Path  []string        `json:"path,omitempty"`
	Added string          `json:"added,omitempty"`
	Set   bool            `json:"set,omitempty"`
	Was   json.RawMessage `json:"was,omitempty"`
	// Had is how many of Path's names the user had (the objects and
	// the array on the way): uninstall leaves those, empty or not.
	Had   int     `json:"had,omitempty"`
	Made  bool    `json:"made,omitempty"`
	Empty *string `json:"empty,omitempty"`
}

// UnmarshalJSON reads the flat list encode writes.
func (r *Record) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	var list []Edit
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*r = Record{}
	for _, e := range list {
		k := e.File
		if k == "" {
			return errors.New("an edit names no file")
		}
		e.File = ""
		if _, ok := (*r)[k]; !ok {
			(*r)[k] = []Edit{}
		}
		if e.Path != nil || e.Made || e.Empty != nil {
			(*r)[k] = append((*r)[k], e)
		}
	}
	return nil
}

// ErrRecord wraps a record that cannot be read.
var ErrRecord = errors.New("setup's record cannot be read")

// RecordFile is where setup keeps its record: under HOME,
// ~/.local/state/tasksessiond/setup.json, whatever $XDG_STATE_HOME says.
// It tells of files under HOME, so every shell of the user's must find
// it: a setup from a shell that sets XDG_STATE_HOME and an uninstall from
// one that does not (an IDE's terminal) would otherwise miss it, and take
// the user's own values with setup's.
func (o Options) RecordFile() string {
	return filepath.Join(o.Home(), ".local", "state", "tasksessiond", "setup.json")
}

// NewPlan starts h's plan for o with setup's record. A record that cannot
// be read is an error, never an empty record (uninstall would then take
// the user's own values too).
func NewPlan(h Host, o Options) (*Plan, error) {
	rec := Record{}
	b, err := config.Read(o.RecordFile())
	if err == nil && b != nil {
		err = json.Unmarshal(b, &rec)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s (%v): move it aside to go on; --uninstall then also removes values you had set like setup's", ErrRecord, o.RecordFile(), err)
	}
	if rec == nil {
		rec = Record{} // the file held null
	}
	return &Plan{Host: h, o: o, rec: rec, recOld: b}, nil
}

// recordKey names file by its real path (HOME or a project reached
// through a link is the same file), resolving the deepest directory on its
// way that is there (setup may be about to make the rest).
func recordKey(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return file
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real // the file itself may be a link (dotfiles)
	}
	for dir, rest := filepath.Dir(abs), filepath.Base(abs); ; dir, rest = filepath.Dir(dir), filepath.Join(filepath.Base(dir), rest) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == filepath.Dir(dir) {
			return abs
		}
	}
}

// find returns the index of the edit at path that matches in file's
// record (-1: none). Setting up, it makes the file's entry (empty when
// setup changes nothing of the user's there): uninstall then knows what
// it finds there is the user's.
func (p *Plan) find(file string, path []string, match func(Edit) bool) int {
	k := recordKey(file)
	if _, ok := p.rec[k]; !ok && !p.o.Uninstall {
		p.restart(file)
	}
	return slices.IndexFunc(p.rec[k], func(e Edit) bool { return slices.Equal(e.Path, path) && match(e) })
}

// restart starts file's record anew, with edits: what the record said of
// a file that setup now finds missing or empty is no longer so.
func (p *Plan) restart(file string, edits ...Edit) {
	p.rec[recordKey(file)] = append([]Edit{}, edits...)
}

// fileEdit is what file's record says of the file itself.
func (p *Plan) fileEdit(file string) (Edit, bool) {
	for _, e := range p.rec[recordKey(file)] {
		if e.Path == nil {
			return e, true
		}
	}
	return Edit{}, false
}

// Recorded reports whether the record names file.
func (p *Plan) Recorded(file string) bool {
	_, ok := p.rec[recordKey(file)]
	return ok
}

// unrecorded notes, uninstalling, a value like setup's in a file of which
// the record says nothing (the record moved aside, another HOME): it
// stays, for it may be the user's.
func (p *Plan) unrecorded(file, what string) {
	if _, ok := p.rec[recordKey(file)]; !ok {
		p.Note("%s in %s: setup's record (%s) says nothing of that file, so it is left as yours", what, file, p.o.RecordFile())
	}
}

// note records e as file's i-th edit (-1: a new one). Setup notes what
// it finds as it adds: an account from an earlier setup of something the
// user has since taken out is replaced.
func (p *Plan) note(file string, i int, e Edit) {
	k := recordKey(file)
	if i >= 0 {
		p.rec[k][i] = e
		return
	}
	p.rec[k] = append(p.rec[k], e)
}

// under records, setting up, that setup adds its own at path, of which
// the user had had names.
func (p *Plan) under(file string, path []string, had int) {
	p.note(file, p.find(file, path, isUnder), Edit{Path: path, Had: had})
}

// kept is how much of path uninstall leaves, taking setup's own out: what
// the user had (0, all of it pruned, with no record).
func (p *Plan) kept(file string, path []string) int {
	if i := p.find(file, path, isUnder); i >= 0 {
		return p.rec[recordKey(file)][i].Had
	}
	return 0
}

func isUnder(e Edit) bool { return e.Path != nil && e.Added == "" && !e.Set }

// userString appends e.Value, a string, to the user's array at e.Path
// unless it is there already, recording that it did. Uninstalling, it
// takes it out if setup added it (in a file a setup that kept no record
// set up, wherever it is).
func userString(p *Plan, d *config.Doc, e Entry, had int) error {
	s, where := e.Value.(string), strings.Join(e.Path, ".")
	i := p.find(e.File, e.Path, func(r Edit) bool { return r.Added == s })
	var have []string
	d.Get(e.Path, &have)
	switch {
	case !p.o.Uninstall && slices.Contains(have, s):
		return nil // the user's own
	case !p.o.Uninstall:
		p.note(e.File, i, Edit{Path: e.Path, Added: s, Had: had})
		p.Step("add %q to %s in %s", s, where, e.File)
		return d.Append(e.Path, s)
	case i < 0:
		if slices.Contains(have, s) {
			p.unrecorded(e.File, fmt.Sprintf("%q in %s", s, where))
		}
		return nil // no record of it: the user's own
	}
	if d.RemoveIf(e.Path, p.rec[recordKey(e.File)][i].Had, func(raw []byte) bool { return string(raw) == strconvQuote(s) }) > 0 {
		p.Step("remove %q from %s in %s", s, where, e.File)
	}
	return nil
}

// userValue makes the user's member at e.Path hold e.Value, recording
// what it held before (a second run, finding e.Value, keeps the user's
// original). Uninstalling, it puts that back (in a file a setup that kept
// no record set up: removes it); a value other than e.Value is the user's
// since, and stays.
func userValue(p *Plan, d *config.Doc, e Entry, had int) error {
	want, err := json.Marshal(e.Value)
	if err != nil {
		return err
	}
	where := strings.Join(e.Path, ".")
	i := p.find(e.File, e.Path, func(r Edit) bool { return r.Set })
	var now json.RawMessage
	there := d.Get(e.Path, &now)
	same := there && bytes.Equal(compact(now), want)
	switch {
	case !p.o.Uninstall && same:
		return nil // the user's own
	case !p.o.Uninstall:
		r := Edit{Path: e.Path, Set: true, Had: had}
		if there {
			r.Was = compact(now)
		}
		p.note(e.File, i, r)
		p.Step("set %s: %s in %s", where, want, e.File)
		return d.Set(e.Path, e.Value)
	case there && !same:
		return nil // changed since: the user's own
	case i < 0:
		if there {
			p.unrecorded(e.File, fmt.Sprintf("%s: %s", where, want))
		}
		return nil // no record of it: the user's own
	}
	r := p.rec[recordKey(e.File)][i]
	if r.Was == nil {
		if d.Delete(e.Path, r.Had) {
			p.Step("remove %s from %s", where, e.File)
		}
		return nil
	}
	p.Step("set %s back to %s in %s", where, r.Was, e.File)
	return d.Set(e.Path, r.Was) // as the user wrote it (1.0 stays 1.0)
}

// recordChange is the change to setup's record the plan makes.
func (p *Plan) recordChange() config.Change {
	var b []byte
	if len(p.rec) > 0 {
		b = p.rec.encode()
	}
	return config.Change{Path: p.o.RecordFile(), Old: p.recOld, New: b, Mode: 0o600, NoBackup: true}
}

func compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// encode writes r as a flat list, an edit a line, files in order (a file
// recorded with no edit as one naming the file alone).
func (r Record) encode() []byte {
	b := []byte("[")
	n := 0
	for _, k := range slices.Sorted(maps.Keys(r)) {
		edits := r[k]
		if len(edits) == 0 {
			edits = []Edit{{}}
		}
		for _, e := range edits {
			e.File = k
			if n > 0 {
				b = append(b, ',')
			}
			line, _ := json.Marshal(e)
			b = append(append(b, "\n  "...), line...)
			n++
		}
	}
	return append(b, "\n]\n"...)
}
