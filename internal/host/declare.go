package host

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

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
	// OwnBlock is a block of setup's own in a TOML file (Value: a
	// Block, Path nil), between markers that name it; the rest of the
	// file, the user's, is not touched. Uninstall removes it.
	OwnBlock
)

// Block is what an OwnBlock holds. Which tables are setup's is said by
// what they are, not by where they are: a host rewriting the file (Codex's
// "codex mcp add") may move them out of the block, and a table of the
// host's or the user's may land in it; either stays the other's.
type Block struct {
	Name  string // in its markers
	Body  string // its tables ("" none: the block goes)
	Holds string // what it holds, for people
	// Server is the path of setup's MCP server in it (["mcp_servers",
	// "tasks"]), with Members, what setup writes there beside command,
	// args and env (SetupsServer): a server of the user's there is
	// refused by name.
	Server, Members []string
	Tables          []string          // the headers of setup's other tables
	Rename          map[string]string // the user's tables to rename (a position setup shifted)
}

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
	p, err := NewPlan(h, o)
	if err != nil {
		return nil, err
	}
	if err := p.Declare(entries); err != nil {
		return nil, err
	}
	return p, nil
}

// Declare plans the entries, each file edited once, its entries in the
// order declared: with o.Uninstall it takes back what the entries put
// there, and with o.NoHook it takes out setup's hooks.
func (p *Plan) Declare(entries []Entry) error {
	o := p.o
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
		switch mine[0].Kind {
		case OwnFile, OwnHookFile:
			if err := ownFile(p, o, mine[0]); err != nil {
				return err
			}
			continue
		case OwnBlock:
			if err := ownBlock(p, o, mine[0].File, mine[0].Value.(Block)); err != nil {
				return err
			}
			continue
		}
		if err := editJSON(p, file, mine[0].Dialect, mine); err != nil {
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

// editJSON plans the entries of the JSON file at path, read in the
// host's dialect (an empty document for a file that is not there), in the
// order declared.
func editJSON(p *Plan, path string, dl config.Dialect, entries []Entry) error {
	old, err := config.Read(path)
	if err != nil {
		return Refuse(path, err)
	}
	doc, err := config.ParseJSON(old, dl)
	if err != nil {
		return Refuse(path, err)
	}
	had := make([]int, len(entries)) // how much of each path the user had
	for i, e := range entries {
		had[i] = doc.Depth(e.Path)
	}
	return p.EditFile(path, old, FileEdit{
		Empty: old != nil && doc.IsEmpty(),
		SetUp: runsTasksessiond(doc, p.o.Bin),
		Check: func(b []byte) error { return config.CheckJSON(b, dl) },
		Ours:  func([]byte) bool { return runsTasksessiond(doc, p.o.Bin) || p.leftUnder(path, doc) },
		Edit: func() ([]byte, bool, error) {
			for i, e := range entries {
				if err := apply(p, doc, e, had[i]); err != nil {
					return nil, false, err
				}
			}
			if doc.IsEmpty() {
				return []byte("{}\n"), true, nil
			}
			return doc.Bytes(), false, nil
		},
	})
}

// apply plans one entry in the document d of its file, of whose path
// the user had had names: set up, or, uninstalling, taken back.
func apply(p *Plan, d *config.Doc, e Entry, had int) error {
	switch e.Kind {
	case OwnServer:
		return ownServer(p, d, e, had)
	case OwnHook:
		return ownHook(p, d, e, had)
	case UserString:
		return userString(p, d, e, had)
	}
	return userValue(p, d, e, had)
}

// ownBlock plans setup's block b in the TOML file at path: set to hold
// b.Body or, with o.Uninstall, taken out, with setup's tables left outside
// it (a file left empty that held only the block is removed).
func ownBlock(p *Plan, o Options, path string, b Block) error {
	body := b.Body
	if o.Uninstall {
		body = ""
	}
	old, err := config.Read(path)
	if err != nil {
		return Refuse(path, err)
	}
	if old != nil {
		if err := config.CheckTOML(old); err != nil {
			return Refuse(path, err)
		}
	}
	server, setups := b.server(old, o.Bin)
	if body != "" && server != nil && !setups {
		return Refuse(path, fmt.Errorf("%s is a server of yours (it runs %s), not one setup wrote: setup leaves it; rename or remove it, then run setup again", strings.Join(b.Server, "."), Command(commandLine(server["command"], toStrings(server["args"]))...)))
	}
	was := config.Block(old, b.Name)
	ours := func(h string) bool {
		s := strings.Join(b.Server, ".")
		return setups && (h == s || strings.HasPrefix(h, s+".")) || slices.Contains(b.Tables, h)
	}
	stripped, _ := config.RemoveBlock(old, b.Name, ours)
	return p.EditFile(path, old, FileEdit{
		Empty: old != nil && len(bytes.TrimSpace(old)) == 0,
		SetUp: was != "" || !bytes.Equal(stripped, old),
		Check: config.CheckTOML,
		// a block of setup's (each is named tasksessiond …) keeps the
		// record of the file
		Ours: func(newb []byte) bool { return bytes.Contains(newb, []byte("# >>> tasksessiond")) },
		Edit: func() ([]byte, bool, error) {
			var newb []byte
			var err error
			if body == "" {
				newb, err = config.RemoveBlock(old, b.Name, ours)
			} else {
				newb, err = config.SetBlock(old, b.Name, body, ours)
			}
			if err != nil {
				return nil, false, err
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
			return config.RenameTables(newb, b.Rename), body == "" && len(newb) == 0 && len(old) > 0, nil
		},
	})
}

// server is the MCP server at b.Server in the TOML file b, and whether
// setup wrote it (nil when there is none).
func (b Block) server(file []byte, bin string) (map[string]any, bool) {
	if b.Server == nil {
		return nil, false
	}
	var v any
	var top map[string]any
	config.DecodeTOML(file, &top) // checked already
	v = top
	for _, k := range b.Server {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(map[string]any)
	return s, s != nil && SetupsServer(s, bin, b.Members...)
}
