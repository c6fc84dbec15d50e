package host

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// Installer is how a host is set up and checked: "tasksessiond setup
// HOST" and "tasksessiond doctor".
type Installer interface {
	// Plan returns the changes that set the host up (or, with
	// o.Uninstall, take back what setup added). It reads the host's
	// files and writes nothing; a file it cannot read is an error that
	// names it and says why.
	Plan(o Options) (*Plan, error)
	// Check says what is wrong with the host's setup beyond what Plan
	// would change (a server under another name, say).
	Check(o Options) []Finding
	// Doctor says whether the host is on this machine, and what beyond
	// setup's files keeps it from using the tools (doctor.go).
	Doctor
}

// Options say where and how a host is set up.
type Options struct {
	// Project is a project directory whose own files are set up; ""
	// sets up the user's.
	Project string
	// Bin is the tasksessiond command the host runs ("tasksessiond" when
	// that is on PATH, else the binary's absolute path).
	Bin string
	// Socket and DB, when set, are given to the MCP server and the hooks
	// (a daemon other than the default one).
	Socket, DB string
	// Session, when set, binds every conversation to that one daemon
	// session (created on first use).
	Session string
	// NoHook sets up the MCP server (or plugin) only.
	NoHook bool
	// Uninstall takes back what setup added.
	Uninstall bool
	// Getenv reads the environment (the hosts' config-dir variables);
	// os.Getenv when nil.
	Getenv func(string) string
}

// Env reads a variable through o.Getenv.
func (o Options) Env(key string) string {
	if o.Getenv == nil {
		return os.Getenv(key)
	}
	return o.Getenv(key)
}

// Home is the user's home directory ($HOME).
func (o Options) Home() string {
	if h := o.Dir("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// Dir is the directory the variable key names, made absolute: a host
// reads its files from wherever it runs, and Codex keys a hook's trust by
// the absolute path of its hooks.json.
func (o Options) Dir(key string) string {
	d := o.Env(key)
	if d == "" {
		return ""
	}
	if abs, err := filepath.Abs(d); err == nil {
		return abs
	}
	return d
}

// Plan is what setup changes: files, and what it tells the user.
type Plan struct {
	Host    Host
	Changes []config.Change
	// Steps say what each change does, for people ("add the MCP server
	// tasks to ~/.claude.json").
	Steps []string
	// Notes say what setup did beside the files, or could not do (a
	// host's own to-do tool it cannot turn off).
	Notes []string

	o      Options
	rec    Record // setup's record (record.go)
	recOld []byte // the record file's bytes as read
}

// Changed reports whether the plan changes any file.
func (p *Plan) Changed() bool {
	for _, c := range p.Changes {
		if c.Changed() {
			return true
		}
	}
	return false
}

// Step records a step for people.
func (p *Plan) Step(format string, args ...any) {
	p.Steps = append(p.Steps, fmt.Sprintf(format, args...))
}

// Note records a note for people.
func (p *Plan) Note(format string, args ...any) {
	p.Notes = append(p.Notes, fmt.Sprintf(format, args...))
}

// Add adds a change (one whose bytes stay the same is kept too: doctor
// and the tests see what setup looked at).
func (p *Plan) Add(c config.Change) { p.Changes = append(p.Changes, c) }

// Apply writes setup's record, then the plan's changes, in order; it stops
// at the first that fails (each change is whole or not at all).
func (p *Plan) Apply() error {
	// The record first: one that did not land stops setup before a file
	// of the user's changes (a recorded edit that never happened is taken
	// back as nothing).
	rc := p.recordChange()
	for i, c := range append([]config.Change{rc}, p.Changes...) {
		if err := config.Ready(c); err != nil {
			return fmt.Errorf("%w; nothing was changed", err)
		}
		if i > 0 {
			p.Changes[i-1].Check = nil // checked: Apply holds the bytes written to these
		}
	}
	if err := config.Apply(rc); err != nil {
		return fmt.Errorf("setup's record: %w; nothing else was changed", err)
	}
	var written []string
	for i, c := range p.Changes {
		if err := config.Apply(c); err != nil {
			if len(written) > 0 {
				err = fmt.Errorf("%w; already changed: %s (run setup again, or --uninstall, to finish)", err, strings.Join(written, ", "))
			}
			// The record says no more than was written: the files not
			// written keep what it said of them before.
			if rerr := config.Apply(p.unrecord(rc, p.Changes[i:])); rerr != nil {
				return fmt.Errorf("%w (and setup's record could not be set back: %v)", err, rerr)
			}
			return err
		}
		if c.Changed() {
			written = append(written, c.Path)
		}
	}
	return nil
}

// unrecord is the change that sets the record written by rc back to what
// it said before of the files of changes, which were not written.
func (p *Plan) unrecord(rc config.Change, changes []config.Change) config.Change {
	var was Record
	json.Unmarshal(p.recOld, &was) // read once already
	for _, c := range changes {
		k := recordKey(c.Path)
		p.forget(k, func(Edit) bool { return true })
		p.rec = append(p.rec, slices.DeleteFunc(slices.Clone(was), func(e Edit) bool { return e.File != k })...)
	}
	return config.Change{Path: rc.Path, Old: rc.New, New: p.rec.encode(), Mode: 0o600, NoBackup: true}
}

// NewPlan starts h's plan for o with setup's record.
func NewPlan(h Host, o Options) (*Plan, error) {
	rec, b, err := readRecord(o)
	if err != nil {
		return nil, err
	}
	return &Plan{Host: h, o: o, rec: rec, recOld: b}, nil
}

// Finding is one thing doctor found wrong.
type Finding struct {
	Problem string // what is wrong
	Fix     string // the command (or edit) that puts it right
}

// Refuse is the error for a file setup cannot read: its path and why,
// and that nothing was changed.
func Refuse(path string, why error) error {
	return fmt.Errorf("refused: %s: %v; nothing was changed", path, why)
}

// runsTasksessiond reports whether a server or hook in d (under its
// top-level mcpServers, mcp or hooks) runs tasksessiond: a command line
// whose first word is bin or is named tasksessiond.
func runsTasksessiond(d *config.Doc, bin string) bool {
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			w := Words(v)
			return len(w) > 0 && (filepath.Base(w[0]) == "tasksessiond" || w[0] == bin)
		case []any:
			return slices.ContainsFunc(v, walk)
		case map[string]any:
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		}
		return false
	}
	for _, top := range []string{"mcpServers", "mcp", "hooks"} {
		var v any
		if d.Get([]string{top}, &v) && walk(v) {
			return true
		}
	}
	return false
}

// Quote quotes a word for a hook's command line (a shell's), when it needs it.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:,+=@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Command is a command line of words, quoted as needed.
func Command(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}

// MCPArgs are the bridge's arguments: "mcp" and the options' daemon and
// session.
func (o Options) MCPArgs() []string {
	args := []string{"mcp"}
	if o.Socket != "" {
		args = append(args, "--socket", o.Socket)
	}
	if o.DB != "" {
		args = append(args, "--db", o.DB)
	}
	if o.Session != "" {
		args = append(args, "--session", o.Session, "--create")
	}
	return args
}

// HookArgs are the hook's arguments for the host called name.
func (o Options) HookArgs(name string) []string {
	args := []string{"hook", name}
	if o.Socket != "" {
		args = append(args, "--socket", o.Socket)
	}
	if o.DB != "" {
		args = append(args, "--db", o.DB)
	}
	if o.Session != "" {
		args = append(args, "--session", o.Session)
	}
	return args
}

// MCPEnv is the bridge's environment in the host's config (the daemon's
// socket and database, when not the defaults); nil when there is none.
func (o Options) MCPEnv() map[string]any {
	env := map[string]any{}
	if o.Socket != "" {
		env["TASKSESSIOND_SOCKET"] = o.Socket
	}
	if o.DB != "" {
		env["TASKSESSIOND_DB"] = o.DB
	}
	if len(env) == 0 {
		return nil
	}
	return env
}

// RunsTasksessiond reports whether a command line runs tasksessiond with
// the given first arguments ("hook", "codex"): its first word's base name
// is tasksessiond, or it is bin.
func RunsTasksessiond(command []string, bin string, args ...string) bool {
	if len(command) < 1+len(args) {
		return false
	}
	if filepath.Base(command[0]) != "tasksessiond" && command[0] != bin {
		return false
	}
	for i, a := range args {
		if command[1+i] != a {
			return false
		}
	}
	return true
}

// Words splits a hook's command line into words (quotes as Quote writes
// them, and double quotes without escapes).
func Words(s string) []string {
	var words []string
	var w strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '\\' && i+1 < len(s):
			w.WriteByte(s[i+1])
			i++
			in = true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}
