package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// A host declares its setup as entries, what should be where, and one
// engine plans install, uninstall, --no-hook, --dry-run and doctor from
// them: a host's package says where its files are and what goes in them,
// and nothing of how.

// Kind is what an entry puts at its path, and so how uninstall takes it
// back: setup's own things (Own…) are known by what they are, the user's
// values setup changes (User…) by setup's record.
type Kind int

const (
	OwnServer  Kind = iota // an MCP server (Value: a Server); one of the user's there is refused
	OwnHook                // a hook group (Value: a Group) in the array at Path (["hooks", EVENT])
	UserString             // a string (Value) added to the user's array at Path (a deny rule)
	UserValue              // the user's value at Path set to Value (the host's own to-do tool off)
	OwnFile                // a whole file (Value: its bytes; nil, as with --no-hook: none)
	OwnBlock               // a block in a TOML file (Value: a Block); the rest of the file is the user's
)

// Block is what an OwnBlock holds, between markers that name it. Which
// tables are setup's is said by what they are, not where: a host rewriting
// the file (Codex's "codex mcp add") may move them out of the block, and
// put one of its own or the user's in it; either stays the other's.
type Block struct {
	Name, Body, Holds string // in its markers; its tables ("" none: it goes); what it holds, for people
	// Server is the path of setup's MCP server in it, with Members, what
	// setup writes there beside command, args and env (SetupsServer).
	Server, Members []string
	Remove          string            // the host's command that removes a server of the user's there
	Tables          []string          // the headers of setup's other tables
	Rename          map[string]string // the user's tables to rename (a position setup shifted)
}

// Entry is one thing setup puts in one of a host's files.
type Entry struct {
	File    string
	Dialect config.Dialect // how the host reads the file
	Kind    Kind
	Path    []string // where in the file
	Value   any
	// Earlier reports, of an OwnFile, whether bytes found there are an
	// earlier setup's (another version, another --bin), which setup
	// replaces though its record does not name the file; nil: none are.
	Earlier func(old []byte) bool
}

// Declared plans h's setup from its entries.
func Declared(h Host, o Options, entries []Entry) (*Plan, error) {
	p, err := NewPlan(h, o)
	if err != nil {
		return nil, err
	}
	return p, p.Declare(entries)
}

// Declare plans the entries, each file edited once, in the order first
// declared.
func (p *Plan) Declare(entries []Entry) error {
	planned := map[string]bool{}
	for _, e := range entries {
		if planned[e.File] {
			continue
		}
		planned[e.File] = true
		old, err := config.Read(e.File)
		switch {
		case err != nil:
		case e.Kind == OwnFile:
			err = p.ownFile(e, old)
		case e.Kind == OwnBlock:
			err = p.ownBlock(e, old)
		default:
			err = p.editJSON(slices.DeleteFunc(slices.Clone(entries), func(x Entry) bool { return x.File != e.File }), old)
		}
		if err != nil {
			return Refuse(e.File, err)
		}
	}
	p.dirs()
	return nil
}

// ownFile plans a whole file of setup's: put there, updated or removed.
// Setup's record says which it made; one it did not make that holds other
// bytes than setup's, and not an earlier setup's (e.Earlier), is
// another's (a copy the user edited), which setup refuses to replace and
// uninstall leaves.
func (p *Plan) ownFile(e Entry, old []byte) error {
	key := recordKey(e.File)
	newb, _ := e.Value.([]byte)
	ours := old == nil || bytes.Equal(old, newb) || p.rec.find(key, []string{}, "") >= 0 || e.Earlier != nil && e.Earlier(old)
	gone := p.o.Uninstall || newb == nil
	switch {
	case !ours && gone:
		p.Note("%s is not the file setup wrote (setup's record does not name it, and it holds other bytes): left as yours", e.File)
		newb = old
	case !ours:
		return errors.New("a file setup did not write is there (setup's record does not name it, and it holds other bytes): setup leaves it; move it aside (or remove it, if an earlier setup wrote it), then run setup again")
	case gone:
		newb = nil
		p.forget(key, nil)
		if old != nil {
			p.Step("remove setup's file %s", e.File)
		}
	case old == nil:
		p.Step("write setup's file %s", e.File)
	case !bytes.Equal(old, newb):
		p.Step("update setup's file %s", e.File)
	}
	if !gone {
		p.first(Edit{File: key, Path: []string{}})
	}
	p.Changes = append(p.Changes, config.Change{Path: e.File, Old: old, New: newb, Mode: 0o644, NoBackup: true})
	return nil
}

// jsonFile plans the entries of one JSON file: its document, its record
// key, whether the record knew it, and whether it held setup's own as
// found.
type jsonFile struct {
	*Plan
	d            *config.Doc
	file         string
	known, setUp bool
}

// editJSON plans the entries of one JSON file, its bytes old read in the
// host's dialect (an empty document for a file that is not there).
func (p *Plan) editJSON(es []Entry, old []byte) error {
	path, dl := es[0].File, es[0].Dialect
	f := &jsonFile{Plan: p, file: recordKey(path)}
	if old == nil && p.o.Uninstall {
		p.forget(f.file, nil) // gone, and what setup did in it
		p.Changes = append(p.Changes, config.Change{Path: path})
		return nil
	}
	var err error
	if f.d, err = config.ParseJSON(old, dl); err != nil {
		return err
	}
	f.known = slices.ContainsFunc(p.rec, func(e Edit) bool { return e.File == f.file })
	empty := f.d.IsEmpty()
	p.found(f.file, old, empty)
	for _, e := range es {
		switch e.Kind {
		case OwnServer:
			err = f.ownServer(e)
		case OwnHook:
			err = f.ownHook(e)
		case UserString:
			err = f.userString(e)
		default:
			err = f.userValue(e)
		}
		if err != nil {
			return err
		}
	}
	f.settle()
	newb := f.d.Bytes()
	if f.d.IsEmpty() {
		emptied := []byte("{}\n")
		if empty {
			emptied = old // as the user wrote it, setup's not in it
		}
		newb = p.emptied(f.file, emptied)
	}
	if p.o.Uninstall && !slices.ContainsFunc(p.rec, func(e Edit) bool { return e.File == f.file && len(e.Path) > 0 }) {
		p.forget(f.file, nil) // no container of setup's holds the user's
	}
	// A file that held setup's own as found, or a value the record says
	// setup set there, is no original to back up.
	check := func(b []byte) error { return config.CheckJSON(b, dl) }
	p.Changes = append(p.Changes, config.Change{Path: path, Old: old, New: newb, Mode: 0o600, Check: check, NoBackup: p.o.Uninstall || f.setUp})
	return nil
}

// settle drops the record's edits of the file that no longer hold,
// deepest first: a container setup made goes once it holds nothing (an
// uninstall or --no-hook took setup's own out) and is forgotten once gone;
// uninstalling, a container of the user's that setup filled gets back its
// layout when it holds nothing again, and is forgotten either way. The
// values and strings are their planners'.
func (f *jsonFile) settle() {
	slices.SortStableFunc(f.rec, func(a, b Edit) int { return len(b.Path) - len(a.Path) }) // deepest first
	f.forget(f.file, func(e Edit) bool {
		switch {
		case len(e.Path) == 0 || e.Added != "":
			return false
		case f.o.Uninstall && f.d.Hollow(e.Path) && e.Was != nil:
			f.d.SetRaw(e.Path, []byte(*e.Was))
		case f.d.Hollow(e.Path) && e.Was == nil: // with --no-hook too
			f.d.Delete(e.Path, len(e.Path)-1)
		}
		return f.d.Depth(e.Path) < len(e.Path) || f.o.Uninstall && e.Was != nil
	})
}

// userString adds the string e.Value to the user's array at e.Path,
// recording it, or, uninstalling, takes out what the record says it added.
func (f *jsonFile) userString(e Entry) error {
	s, where := e.Value.(string), strings.Join(e.Path, ".")
	var have []string
	f.d.Get(e.Path, &have)
	switch {
	case !f.o.Uninstall && slices.Contains(have, s):
		f.setUp = f.setUp || f.rec.find(f.file, e.Path, s) >= 0 // added already: the file is no original
		return nil                                              // the user's own, or added already
	case !f.o.Uninstall:
		f.made(e.Path)
		f.first(Edit{File: f.file, Path: e.Path, Added: s})
		f.Step("add %q to %s in %s", s, where, e.File)
		return f.d.Append(e.Path, s)
	}
	if _, ok := f.take(e.Path, s); !ok {
		if slices.Contains(have, s) {
			f.unrecorded(fmt.Sprintf("%q in %s", s, where), e.File)
		}
		return nil
	}
	// the last of them, which setup appended: another is the user's
	n, seen := 0, 0
	for _, x := range have {
		if x == s {
			n++
		}
	}
	last := func(raw []byte) bool {
		var x string
		if json.Unmarshal(raw, &x) == nil && x == s {
			seen++
			return seen == n
		}
		return false
	}
	if f.d.RemoveIf(e.Path, f.keep(e.Path), last) > 0 {
		f.Step("remove %q from %s in %s", s, where, e.File)
	}
	return nil
}

// userValue sets the user's member at e.Path to e.Value, recording what
// it was; uninstalling, it puts that back where the member still holds
// e.Value (another value is the user's since).
func (f *jsonFile) userValue(e Entry) error {
	want, err := json.Marshal(e.Value)
	if err != nil {
		return err
	}
	where, now := strings.Join(e.Path, "."), raw(f.d, e.Path)
	if !f.o.Uninstall {
		if now == string(want) {
			f.setUp = f.setUp || f.rec.find(f.file, e.Path, "") >= 0 // set already: the file is no original
			return nil                                               // the user's own, or set already
		}
		r := Edit{File: f.file, Path: e.Path}
		if now != "" {
			was := string(f.d.Raw(e.Path))
			r.Was = &was
		}
		f.made(e.Path[:len(e.Path)-1])
		f.take(e.Path, "") // the user's since
		f.rec = append(f.rec, r)
		f.Step("set %s: %s in %s", where, want, e.File)
		return f.d.Set(e.Path, e.Value)
	}
	r, ok := f.take(e.Path, "")
	switch {
	case now != string(want):
		return nil // not there, or changed since: the user's
	case !ok:
		f.unrecorded(fmt.Sprintf("%s: %s", where, want), e.File)
		return nil
	case r.Was == nil:
		f.d.Delete(e.Path, f.keep(e.Path))
		f.Step("remove %s from %s", where, e.File)
		return nil
	}
	f.Step("set %s back to %s in %s", where, *r.Was, e.File)
	return f.d.SetRaw(e.Path, []byte(*r.Was)) // as the user wrote it (1.0 stays 1.0)
}

// unrecorded notes a value like setup's left, for the record says nothing
// of its file (moved aside, another HOME): it may be the user's.
func (f *jsonFile) unrecorded(what, file string) {
	if !f.known {
		f.Note("%s in %s: setup's record (%s) says nothing of that file, so it is left as yours", what, file, f.o.RecordFile())
	}
}

// ownBlock sets setup's block in a TOML file or, uninstalling, takes it
// out, with setup's tables a host's rewrite left outside it.
func (p *Plan) ownBlock(e Entry, old []byte) error {
	path, b, key := e.File, e.Value.(Block), recordKey(e.File)
	body := b.Body
	if p.o.Uninstall {
		body = ""
	}
	if err := config.CheckTOML(old); err != nil {
		return err
	}
	var v any // the server at b.Server, if any
	if b.Server != nil {
		config.DecodeTOML(old, &v) // checked already
	}
	for _, k := range b.Server {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	server, _ := v.(map[string]any)
	setups := server != nil && SetupsServer(server, p.o.Bin, b.Members...)
	was := config.Block(old, b.Name)
	if setups && was == "" && p.rec.find(key, b.Server, "") < 0 {
		// like setup's, but neither in its block nor in its record: the
		// user's own, written by hand or by the host's own command
		if body != "" {
			return fmt.Errorf("%s is a server of yours (it runs %s, as setup's would, but setup did not write it): setup leaves it; remove it (%s), then run setup again", strings.Join(b.Server, "."), Command(serverWords(server)...), b.Remove)
		}
		p.Note("%s in %s is yours (setup's record does not name it): left", strings.Join(b.Server, "."), path)
		setups = false
		server = nil
	}
	if body != "" && server != nil && !setups {
		return yours(b.Server, server)
	}
	if words := serverWords(server); body == "" && was != "" && server != nil && !setups && len(words) > 0 && SetupsServer(server, words[0], b.Members...) {
		// setup's, written with another --bin: its block stays whole for
		// the uninstall with that --bin to take out
		p.Note("the MCP server %q in %s, which setup added, runs %s now: left, with setup's block; run uninstall with the --bin setup was given", b.Server[len(b.Server)-1], path, Command(words...))
		p.Changes = append(p.Changes, config.Change{Path: path, Old: old, New: old, Mode: 0o600, Check: config.CheckTOML, NoBackup: true})
		return nil
	}
	if server != nil && !setups {
		p.Note("%s in %s is not as setup wrote it (it runs %s): left as yours; remove it yourself if you want it gone", strings.Join(b.Server, "."), path, Command(serverWords(server)...))
	}
	ours := func(h string) bool {
		s := strings.Join(b.Server, ".")
		return setups && (h == s || strings.HasPrefix(h, s+".")) || slices.Contains(b.Tables, h)
	}
	stripped, err := config.RemoveBlock(old, b.Name, ours)
	newb := stripped
	if body != "" {
		newb, err = config.SetBlock(old, b.Name, body, ours)
	}
	if err != nil {
		return err
	}
	if body != "" && was == "" && holdsTOML(old, body) {
		// setup's tables, whole, left without their block by a rewrite
		// of the host's (its own "mcp add" may drop the begin marker): the
		// host reads them as setup wrote them, so there is nothing to do
		newb = old
	}
	switch {
	case bytes.Equal(newb, old):
	case body == "" && was != "":
		p.Step("remove setup's block (%s) from %s", b.Holds, path)
	case body == "":
		p.Step("remove setup's tables (%s), left without their block by a rewrite of the host's, from %s", b.Holds, path)
	case was == "":
		p.Step("add %s to %s", b.Holds, path)
	default:
		p.Step("replace setup's block in %s (it was:\n%s)", path, strings.TrimRight(was, "\r\n"))
	}
	newb = config.RenameTables(newb, b.Rename)
	p.found(key, old, len(bytes.TrimSpace(old)) == 0)
	if len(bytes.TrimSpace(newb)) == 0 {
		newb = p.emptied(key, newb)
	}
	if p.o.Uninstall && !bytes.Contains(newb, []byte("# >>> tasksessiond")) && (server == nil || setups) {
		p.forget(key, nil) // no other block of setup's is left, nor a server it may have written (another --bin)
	}
	if body != "" && b.Server != nil {
		p.first(Edit{File: key, Path: b.Server}) // setup's server, wherever a rewrite of the host's moves it
	}
	// a file with a block of setup's in it (this one, or another's: a
	// project's trust beside the user's setup) is no original to back up
	setUp := was != "" || !bytes.Equal(stripped, old) || bytes.Contains(old, []byte("# >>> tasksessiond"))
	p.Changes = append(p.Changes, config.Change{Path: path, Old: old, New: newb, Mode: 0o600, Check: config.CheckTOML, NoBackup: p.o.Uninstall || setUp})
	return nil
}

// holdsTOML reports whether the TOML file b holds every key of body with
// its value.
func holdsTOML(b []byte, body string) bool {
	var have, want map[string]any
	if config.DecodeTOML(b, &have) != nil || config.DecodeTOML([]byte(body), &want) != nil {
		return false
	}
	return within(want, have)
}

// within reports whether every leaf of want is in have, equal (a number
// as a number: a host may write 30 back as 30.0).
func within(want, have any) bool {
	if i, ok := want.(int64); ok {
		want = float64(i)
	}
	if i, ok := have.(int64); ok {
		have = float64(i)
	}
	w, ok := want.(map[string]any)
	if !ok {
		return reflect.DeepEqual(want, have)
	}
	h, ok := have.(map[string]any)
	for k, v := range w {
		if !ok || !within(v, h[k]) {
			return false
		}
	}
	return ok
}
