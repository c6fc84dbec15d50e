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
	// Plan reads the host's files and returns the changes that set it up
	// (or take setup back), writing nothing; a file it cannot read is an
	// error that names it and says why.
	Plan(o Options) (*Plan, error)
	Check(o Options) []Finding // what is wrong beyond what Plan would change
	Doctor                     // whether the host is here, and what else keeps it from the tools
}

// Options say where and how a host is set up.
type Options struct {
	Project    string              // a project directory whose own files are set up; "" the user's
	Bin        string              // the tasksessiond command the host runs
	Socket, DB string              // a daemon other than the default, for the server and the hooks
	Session    string              // binds every conversation to this one daemon session
	NoHook     bool                // sets up the MCP server (or plugin) only
	Uninstall  bool                // takes back what setup added
	Getenv     func(string) string // reads the environment (os.Getenv when nil)
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
	if abs, err := filepath.Abs(d); d != "" && err == nil {
		return abs
	}
	return d
}

// MCPArgs are the bridge's arguments: "mcp" and the options' daemon and
// session.
func (o Options) MCPArgs() []string {
	if o.Session != "" {
		return append(o.daemonArgs("mcp"), "--session", o.Session, "--create")
	}
	return o.daemonArgs("mcp")
}

// HookArgs are the hook's arguments for the host called name.
func (o Options) HookArgs(name string) []string {
	if o.Session != "" {
		return append(o.daemonArgs("hook", name), "--session", o.Session)
	}
	return o.daemonArgs("hook", name)
}

func (o Options) daemonArgs(args ...string) []string {
	if o.Socket != "" {
		args = append(args, "--socket", o.Socket)
	}
	if o.DB != "" {
		args = append(args, "--db", o.DB)
	}
	return args
}

// MCPEnv is the bridge's environment in the host's config (the daemon's
// socket and database, when not the defaults); nil when there is none.
func (o Options) MCPEnv() map[string]any {
	env := map[string]any{}
	for k, v := range map[string]string{"TASKSESSIOND_SOCKET": o.Socket, "TASKSESSIOND_DB": o.DB} {
		if v != "" {
			env[k] = v
		}
	}
	if len(env) == 0 {
		return nil
	}
	return env
}

// Plan is what setup changes: files, and what it tells the user.
type Plan struct {
	Host    Host
	Changes []config.Change // each file setup looked at, changed or not
	Steps   []string        // what the changes do, for people
	Notes   []string        // what setup did beside the files, or could not do

	o      Options
	rec    Record   // setup's record (record.go)
	recOld []byte   // the record file's bytes as read
	rmdirs []string // directories setup made that uninstall leaves empty
}

// NewPlan starts h's plan for o with setup's record.
func NewPlan(h Host, o Options) (*Plan, error) {
	rec, b, err := readRecord(o)
	if err != nil {
		return nil, err
	}
	return &Plan{Host: h, o: o, rec: rec, recOld: b}, nil
}

// Changed reports whether the plan changes any file.
func (p *Plan) Changed() bool {
	return slices.ContainsFunc(p.Changes, config.Change.Changed)
}

// Step and Note say, for people, what a change does and what setup did
// beside the files or could not do.
func (p *Plan) Step(format string, args ...any) {
	p.Steps = append(p.Steps, fmt.Sprintf(format, args...))
}

func (p *Plan) Note(format string, args ...any) {
	p.Notes = append(p.Notes, fmt.Sprintf(format, args...))
}

// Apply checks every change, then writes setup's record and the changes in
// order, stopping at the first that fails (each is whole or not at all).
func (p *Plan) Apply() error {
	// The record first: one that did not land stops setup before a file
	// of the user's changes.
	rc := config.Change{Path: p.o.RecordFile(), Old: p.recOld, New: p.rec.encode(), Mode: 0o600, NoBackup: true}
	for _, c := range append([]config.Change{rc}, p.Changes...) {
		if err := config.Ready(c); err != nil {
			return fmt.Errorf("%w; nothing was changed", err)
		}
	}
	if err := config.Apply(rc); err != nil {
		return fmt.Errorf("setup's record: %w; nothing else was changed", err)
	}
	for i, c := range p.Changes {
		// Ready parsed the new bytes as the host does, and Apply reads
		// back the bytes it wrote: a second parse of a host's 65 MB
		// state file costs a third of setup's time there.
		c.Check = nil
		if err := config.Apply(c); err != nil {
			return p.stopped(i, rc, err)
		}
	}
	for _, d := range p.rmdirs {
		os.Remove(d) // empty, as planned; one written in since stays
	}
	return nil
}

// stopped is Apply's error when change i failed, which names the files
// changed before it; the record is set back to what it said of the files
// not written, and of the directories not removed or not made.
func (p *Plan) stopped(i int, rc config.Change, err error) error {
	var written []string
	for _, c := range p.Changes[:i] {
		if c.Changed() {
			written = append(written, c.Path)
		}
	}
	if len(written) > 0 {
		err = fmt.Errorf("%w; already changed: %s (run setup again, or --uninstall, to finish)", err, strings.Join(written, ", "))
	}
	var was Record
	json.Unmarshal(p.recOld, &was) // read once already
	for _, c := range p.Changes[i:] {
		key := recordKey(c.Path)
		p.forget(key, nil)
		p.rec = append(p.rec, slices.DeleteFunc(slices.Clone(was), func(e Edit) bool { return e.File != key })...)
	}
	for _, d := range p.rmdirs {
		p.first(Edit{File: d, Path: []string{}})
	}
	// nor of the directories setup was about to make that it did not
	p.rec = slices.DeleteFunc(p.rec, func(e Edit) bool {
		_, err := os.Lstat(e.File) // not there, or a name the file system refuses
		return len(e.Path) == 0 && e.Was == nil && was.find(e.File, e.Path, "") < 0 && err != nil
	})
	if rerr := config.Apply(config.Change{Path: rc.Path, Old: rc.New, New: p.rec.encode(), Mode: 0o600, NoBackup: true}); rerr != nil {
		return fmt.Errorf("%w (and setup's record could not be set back: %v)", err, rerr)
	}
	return err
}

// NotUsers is the error for setup --project whose project file is the
// user's own file (the project is HOME, or OpenCode's config directory):
// it would edit the user's setup, and --project --uninstall take it out.
func NotUsers(o Options, file, users string) error {
	if o.Project == "" || recordKey(file) != recordKey(users) {
		return nil
	}
	return fmt.Errorf("%s is your user configuration, not a project's: run setup without --project", file)
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

// Command is a command line of words, each quoted for a shell as needed.
func Command(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}

// Quote quotes a word for a hook's command line (a shell's), when it needs it.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:,+=@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Words splits a command line into words: quotes as Quote writes them,
// double quotes without escapes, and backslashes.
func Words(s string) []string {
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t':
			if in {
				words, in = append(words, w.String()), false
				w.Reset()
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

// RunsTasksessiond reports whether a command line runs tasksessiond with
// the given first arguments ("hook", "codex"): its first word's base name
// is tasksessiond, or it is bin.
func RunsTasksessiond(command []string, bin string, args ...string) bool {
	return len(command) > len(args) && (filepath.Base(command[0]) == "tasksessiond" || command[0] == bin) &&
		slices.Equal(command[1:1+len(args)], args)
}
