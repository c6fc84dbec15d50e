package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// Doctor is a host's word, beyond setup's own files, on whether it will
// use the tools: whether it is installed, the plugin or extension that
// sets it up another way, and the settings that keep it from offering the
// tools or running the hook though they are set up. "tasksessiond doctor"
// asks it.
type Doctor interface {
	Diagnose(o Options) Diagnosis
}

// Diagnosis is what a Doctor found.
type Diagnosis struct {
	// Installed reports whether the host is on this machine: its command
	// on PATH, or its configuration directory holding something of its
	// own (not only what setup left there after an uninstall).
	Installed bool
	// Route names the plugin or extension that sets the host up
	// ("the plugin tasksessiond@tasksessiond"); "" when there is none
	// and setup's own entries are what the host uses.
	Route string
	// Duplicates are setup's own entries beside the Route: the model
	// would get the tools twice (or the host hides one of them).
	Duplicates []Finding
	// Blocked are the settings that keep the host from offering the
	// tools or running the hook, each with its fix.
	Blocked []Finding
}

// Block adds a setting that keeps the host from offering the tools or
// running the hook, with its fix.
func (d *Diagnosis) Block(problem, fix string) {
	d.Blocked = append(d.Blocked, Finding{Problem: problem, Fix: fix})
}

// ErrDuplicate wraps a setup refused because a plugin or extension sets
// the host up already.
var ErrDuplicate = errors.New("set up already by its plugin or extension")

// BesideRoute is the error for setting h up beside the plugin or
// extension that sets it up already (nil when there is none, or when o
// takes setup back): a second copy gives the model the tools twice.
func BesideRoute(h Host, o Options) error {
	if o.Uninstall {
		return nil
	}
	if r := h.Diagnose(o).Route; r != "" {
		return fmt.Errorf("%s is %w (%s): a setup beside it gives the model the tools twice; nothing was changed (remove %s first to use setup's instead)", h.Title(), ErrDuplicate, r, r)
	}
	return nil
}

// ProjectDir is the folder the host would run in: o.Project, else the
// current directory ("" when there is none).
func ProjectDir(o Options) string {
	if o.Project != "" {
		return o.Project
	}
	wd, _ := os.Getwd()
	return wd
}

// Upward is dir and each folder above it, up to the root or to the first
// that stop (nil: none) says is the last.
func Upward(dir string, stop func(string) bool) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		out = append(out, d)
		if filepath.Dir(d) == d || stop != nil && stop(d) {
			return out
		}
	}
}

// RealPath is p with its links resolved, or p cleaned when it cannot be.
func RealPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// Wildcard matches a name as OpenCode's permission names and Qwen Code's
// mcp.allowed and mcp.excluded do: "*" any run of characters, "?" one,
// the rest as it is.
func Wildcard(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?s)^")
	for _, r := range pattern {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return regexp.MustCompile(b.String() + "$")
}

// OnPath reports whether the command name is on PATH.
func OnPath(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// Holds reports whether the directory dir holds a file (at any depth)
// other than setup's backups: a host's directory that setup made and
// uninstall emptied (empty directories left, as OpenCode's plugin/) is no
// sign of the host.
func Holds(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil // unreadable: nothing known of it
		case found:
			return filepath.SkipAll
		case !e.IsDir() && !strings.HasSuffix(e.Name(), ".tasksessiond-backup"):
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// ReadJSON reads the JSON (comments and trailing commas allowed: a
// doctor reads what the host reads, whatever its dialect) file at path
// into out. A file that is not there is no error: it reports false.
func ReadJSON(path string, out any) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path once, not "read PATH: "
		}
		return false, fmt.Errorf("%s: %w", path, err)
	}
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	if len(bytes.TrimSpace(b)) == 0 {
		return false, nil
	}
	if err := DecodeJSON(b, out); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return true, nil
}

// DecodeJSON decodes b, JSON with comments and trailing commas allowed,
// into out. A // comment may end b without a newline, as the hosts'
// readers take it (hujson wants one).
func DecodeJSON(b []byte, out any) error {
	std, err := hujson.Standardize(append([]byte(nil), b...))
	if err != nil && !bytes.HasSuffix(b, []byte("\n")) {
		if s, serr := hujson.Standardize(append(bytes.Clone(b), '\n')); serr == nil {
			std, err = s, nil
		}
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(std, out)
}

// OtherServers is what a host's Check finds in its JSON file at path: each
// server in the object at servers, other than name, that runs
// tasksessiond mcp (the model gets the tools twice), said with why and
// fixed by fix(its name).
func OtherServers(h Host, o Options, path string, dl config.Dialect, servers []string, name, why string, fix func(string) string) []Finding {
	b, err := config.Read(path)
	if err != nil || b == nil {
		return nil
	}
	d, err := config.ParseJSON(b, dl)
	if err != nil {
		return []Finding{{Problem: Refuse(path, err).Error(), Fix: "repair the file, then: tasksessiond setup " + h.Name()}}
	}
	var all map[string]map[string]any
	d.Get(servers, &all)
	var out []Finding
	for _, n := range d.Members(servers) {
		if n != name && RunsTasksessiond(serverWords(all[n]), o.Bin, "mcp") {
			out = append(out, Finding{Problem: "the MCP server " + n + " in " + path + " " + why, Fix: fix(n)})
		}
	}
	return out
}
