package host

import (
	"bytes"
	"slices"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// A host declares its setup as entries: what should be where. One engine,
// Declared, plans install and uninstall from them (and --dry-run and
// doctor read that plan); a host's package says where its files are and
// what goes in them, and nothing of how.

// Kind is what an entry puts at its path, and so how uninstall takes it
// back.
type Kind int

const (
	// OwnServer is setup's MCP server (Value: a Server) at Path, known by
	// what it runs; uninstall removes it, and a server of the user's
	// there is refused by name.
	OwnServer Kind = iota
	// OwnHook is setup's hook group (Value: a Group) in the array at
	// Path (["hooks", EVENT]), known by what it runs ("tasksessiond hook
	// HOST"); --no-hook and uninstall remove it.
	OwnHook
	// UserString adds a string (Value) to the user's array at Path (a
	// permission, a deny rule); setup's record keeps that it did, so
	// uninstall takes out only what setup added.
	UserString
	// UserValue sets the user's value at Path (the host's own to-do tool
	// off); the record keeps what it was, and uninstall puts that back.
	UserValue
	// OwnFile is a whole file of setup's (Value: its bytes, Path nil),
	// put there or brought up to date; uninstall removes it.
	OwnFile
	// OwnHookFile is a whole file of setup's hooks, as OwnFile; --no-hook
	// removes it too.
	OwnHookFile
)

// Entry is one thing setup puts in one of a host's files.
type Entry struct {
	File    string         // the file's path
	Dialect config.Dialect // how the host reads it
	Kind    Kind
	Path    []string // where in the file
	Value   any
}

// Declared plans h's setup from its entries.
func Declared(h Host, o Options, entries []Entry) (*Plan, error) {
	p := NewPlan(h, o)
	if err := p.Declare(o, entries); err != nil {
		return nil, err
	}
	return p, nil
}

// Declare plans the entries, each file edited once, its entries in the
// order declared: with o.Uninstall it takes back what the entries put
// there, and with o.NoHook it takes out setup's hooks.
func (p *Plan) Declare(o Options, entries []Entry) error {
	var files []string
	for _, e := range entries {
		if !slices.Contains(files, e.File) {
			files = append(files, e.File)
		}
	}
	for _, file := range files {
		var mine []Entry
		for _, e := range entries {
			if e.File == file {
				mine = append(mine, e)
			}
		}
		if k := mine[0].Kind; k == OwnFile || k == OwnHookFile {
			if err := ownFile(p, o, mine[0]); err != nil {
				return err
			}
			continue
		}
		if _, err := EditJSON(p, file, mine[0].Dialect, func(d *config.Doc) error {
			for _, e := range mine {
				if err := apply(p, d, p.Host, o, e); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// ownFile plans a whole file of setup's.
func ownFile(p *Plan, o Options, e Entry) error {
	old, err := config.Read(e.File)
	if err != nil {
		return Refuse(e.File, err)
	}
	c := config.Change{Path: e.File, Old: old, New: e.Value.([]byte), Mode: 0o644, NoBackup: true}
	what := "the plugin"
	if e.Kind == OwnHookFile {
		what = "the hooks file"
	}
	switch {
	case o.Uninstall || o.NoHook && e.Kind == OwnHookFile:
		c.New = nil
		if old != nil {
			p.Step("remove %s %s", what, e.File)
		}
	case old == nil:
		p.Step("install %s %s", what, e.File)
	case !bytes.Equal(old, c.New):
		p.Step("update %s %s", what, e.File)
	default:
		c.New = old
	}
	p.Add(c)
	return nil
}

// apply plans one entry in the document d of its file.
func apply(p *Plan, d *config.Doc, h Host, o Options, e Entry) error {
	take := o.Uninstall
	switch e.Kind {
	case OwnServer:
		if take {
			return RemoveServer(p, d, e.File, e.Path, e.Value.(Server))
		}
		return SetServer(p, d, e.File, e.Path, e.Value.(Server))
	case OwnHook:
		event := e.Path[len(e.Path)-1]
		if take || o.NoHook {
			return RemoveHooks(p, d, e.File, event, o.Bin, h.Name())
		}
		return SetHook(p, d, e.File, event, o.Bin, h.Name(), e.Value.(Group))
	case UserString:
		if take {
			return RemoveString(p, d, e.File, e.Path, e.Value.(string))
		}
		return AddString(p, d, e.File, e.Path, e.Value.(string))
	default:
		if take {
			return UnsetValue(p, d, e.File, e.Path, e.Value)
		}
		return SetValue(p, d, e.File, e.Path, e.Value)
	}
}
