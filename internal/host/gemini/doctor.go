package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

var _ host.Doctor = Host{}

// extension is the repository's extension's name (gemini-extension.json).
const extension = "tasksessiond"

// geminiHome is where Gemini CLI keeps its own files: $GEMINI_CLI_HOME,
// else ~.
func geminiHome(o host.Options) string {
	if h := o.Env("GEMINI_CLI_HOME"); h != "" {
		return h
	}
	return o.Home()
}

// systemSettings is the administrator's settings file (Linux).
func systemSettings(o host.Options) string {
	if p := o.Env("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); p != "" {
		return p
	}
	return "/etc/gemini-cli/settings.json"
}

// systemDefaults is the administrator's defaults file, beside the
// system settings (Gemini CLI 0.61.0's getSystemDefaultsPath).
func systemDefaults(o host.Options) string {
	if p := o.Env("GEMINI_CLI_SYSTEM_DEFAULTS_PATH"); p != "" {
		return p
	}
	return filepath.Join(filepath.Dir(systemSettings(o)), "system-defaults.json")
}

// secure reports whether Gemini CLI reads the system file p: it skips
// one that (or a folder above which) others than its owner may write
// (isFileAndDirectorySecureSync, in short).
var secure = func(p string) bool {
	for _, q := range []string{p, realPath(p)} {
		for d := q; ; d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o022 != 0 {
				return false
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return true
}

var bom = []byte("\xef\xbb\xbf")

// readSettings reads the settings file p into out as Gemini CLI 0.61.0
// does (strip-json-comments, then JSON.parse): one that is not there
// is nothing (false); one it cannot parse, a byte order mark, a trailing
// comma, an empty file, a directory, is an error (Gemini CLI's is fatal).
// A member of another type than doctor expects is left out, as Gemini
// CLI only warns of it.
func readSettings(p string, out any) (bool, error) {
	if _, err := os.Stat(p); err != nil {
		return false, nil // existsSync: false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return false, fmt.Errorf("%s: %w", p, errors.Unwrap(err))
	}
	switch {
	case bytes.HasPrefix(b, bom):
		return false, fmt.Errorf("%s: it begins with a byte order mark", p)
	case len(bytes.TrimSpace(b)) == 0:
		return false, fmt.Errorf("%s: it is empty, which is no JSON", p)
	}
	if _, err := config.ParseJSON(b, config.JSONComments); err != nil {
		return false, fmt.Errorf("%s: %w", p, err)
	}
	std, err := hujson.Standardize(append([]byte(nil), b...))
	if err != nil {
		return false, fmt.Errorf("%s: %w", p, err)
	}
	var te *json.UnmarshalTypeError
	if err := json.Unmarshal(std, out); err != nil && !errors.As(err, &te) {
		return false, fmt.Errorf("%s: %w", p, err)
	}
	return true, nil
}

// settings is what doctor reads of one settings file.
type settings struct {
	path string
	MCP  struct {
		Allowed  []string `json:"allowed"`
		Excluded []string `json:"excluded"`
	} `json:"mcp"`
	MCPServers map[string]struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	} `json:"mcpServers"`
	HooksConfig struct {
		Enabled  *bool    `json:"enabled"`
		Disabled []string `json:"disabled"`
	} `json:"hooksConfig"`
	Hooks map[string][]struct {
		Hooks []struct{ Name, Command string }
	} `json:"hooks"`
	Security struct {
		FolderTrust struct {
			Enabled *bool `json:"enabled"`
		} `json:"folderTrust"`
	} `json:"security"`
	Admin struct {
		MCP struct {
			Enabled *bool `json:"enabled"`
		} `json:"mcp"`
	} `json:"admin"`
}

// Diagnose finds the extension route (the repository's extension
// installed and enabled here), setup's own entries beside it, and what
// keeps Gemini CLI from offering the tools or running the hooks: the
// folder untrusted (Gemini CLI then starts no MCP server, the user's
// included, and reads no project settings), the server excluded or not
// allowed, disabled with "gemini mcp disable", hooks off.
func (h Host) Diagnose(o host.Options) host.Diagnosis {
	dir := filepath.Join(geminiHome(o), ".gemini")
	d := host.Diagnosis{Installed: host.OnPath("gemini") || host.Holds(dir)}
	cwd := o.Project
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	// the files as Gemini CLI merges them for the folder's trust, lowest
	// first (the system's settings override the user's), then the
	// workspace's, read whether trusted or not: a file it cannot read
	// stops Gemini CLI at start, whatever the folder's trust
	var ls []settings
	read := func(p string, system bool) (settings, bool) {
		s := settings{path: p}
		if system && !secure(p) {
			return s, false // Gemini CLI skips it, with a warning
		}
		ok, err := readSettings(p, &s)
		if err != nil {
			d.Blocked = append(d.Blocked, host.Finding{
				Problem: "Gemini CLI cannot read " + err.Error() + ": it stops at start (\"Please fix the configuration file(s)\")",
				Fix:     "repair " + p + " (JSON, comments allowed: no trailing comma, no byte order mark), or remove it",
			})
		}
		return s, ok
	}
	for _, f := range []struct {
		path   string
		system bool
	}{{systemDefaults(o), true}, {filepath.Join(dir, "settings.json"), false}, {systemSettings(o), true}} {
		if s, ok := read(f.path, f.system); ok {
			ls = append(ls, s)
		}
	}
	trusted, why, terr := folderTrusted(o, ls, cwd)
	if terr != nil {
		d.Blocked = append(d.Blocked, host.Finding{
			Problem: "Gemini CLI cannot read " + terr.Error() + ": it stops at start (\"Please fix the configuration file\")",
			Fix:     "repair " + trustedFoldersFile(o) + " (JSON, comments allowed: no trailing comma, no byte order mark)",
		})
	}
	if cwd != "" && realPath(cwd) != realPath(geminiHome(o)) {
		ws, ok := read(filepath.Join(cwd, ".gemini", "settings.json"), false)
		if ok && trusted {
			ls = append(ls, ws)
		}
	}
	server := Server
	if enabledExtension(o, dir, cwd) {
		d.Route = "the extension " + extension
		server = "ext:" + extension + ":" + Server
		for _, l := range ls {
			for _, n := range sortedKeys(l.MCPServers) {
				s := l.MCPServers[n]
				if host.RunsTasksessiond(append([]string{s.Command}, s.Args...), o.Bin, "mcp") {
					d.Duplicates = append(d.Duplicates, host.Finding{
						Problem: fmt.Sprintf("the MCP server %s in %s runs tasksessiond mcp beside the extension's: two bridges start, and the model gets the tools twice", n, l.path),
						Fix:     host.Command("tasksessiond", "setup", "gemini", "--uninstall") + " (or, to keep setup's: gemini extensions uninstall " + extension + ")",
					})
				}
			}
		}
	}
	if !trusted && terr == nil {
		d.Blocked = append(d.Blocked, host.Finding{
			Problem: fmt.Sprintf("Gemini CLI does not trust the folder %s (%s): it starts no MCP server there, yours included", cwd, why),
			Fix:     "trust the folder when Gemini CLI asks (or /permissions), or add \"" + cwd + "\": \"TRUST_FOLDER\" to " + trustedFoldersFile(o),
		})
	}
	hooksOn := !o.NoHook || d.Route != ""
	for _, l := range ls {
		if l.Admin.MCP.Enabled != nil && !*l.Admin.MCP.Enabled {
			d.Blocked = append(d.Blocked, host.Finding{
				Problem: fmt.Sprintf(`"admin": {"mcp": {"enabled": false}} in %s: Gemini CLI starts no MCP server`, l.path),
				Fix:     "ask whoever keeps " + l.path + " to allow MCP servers",
			})
		}
		if slices.ContainsFunc(l.MCP.Excluded, func(s string) bool { return names(s, server) }) {
			d.Blocked = append(d.Blocked, host.Finding{
				Problem: fmt.Sprintf("mcp.excluded in %s names the server %s: Gemini CLI does not start it", l.path, server),
				Fix:     fmt.Sprintf("remove %q from mcp.excluded in %s", Server, l.path),
			})
		}
		if l.MCP.Allowed != nil && !slices.ContainsFunc(l.MCP.Allowed, func(s string) bool { return names(s, server) }) {
			d.Blocked = append(d.Blocked, host.Finding{
				Problem: fmt.Sprintf("mcp.allowed in %s leaves out the server %s: Gemini CLI starts only the servers it names", l.path, server),
				Fix:     fmt.Sprintf("add %q to mcp.allowed in %s", server, l.path),
			})
		}
		if hooksOn && l.HooksConfig.Enabled != nil && !*l.HooksConfig.Enabled {
			d.Blocked = append(d.Blocked, host.Finding{
				Problem: fmt.Sprintf(`"hooksConfig": {"enabled": false} in %s: Gemini CLI runs no hook, so the list is not given back after resume or compression`, l.path),
				Fix:     fmt.Sprintf(`remove "hooksConfig.enabled" from %s`, l.path),
			})
		}
		if hooksOn && slices.Contains(l.HooksConfig.Disabled, "tasksessiond") {
			d.Blocked = append(d.Blocked, host.Finding{
				Problem: fmt.Sprintf(`hooksConfig.disabled in %s names the hook "tasksessiond": Gemini CLI does not run it`, l.path),
				Fix:     fmt.Sprintf(`remove "tasksessiond" from hooksConfig.disabled in %s`, l.path),
			})
		}
	}
	var en map[string]struct {
		Enabled *bool `json:"enabled"`
	}
	f := filepath.Join(dir, "mcp-server-enablement.json")
	host.ReadJSON(f, &en)
	// keyed by the server's id, lower case (an extension's: either form)
	for _, id := range slices.Compact([]string{strings.ToLower(server), Server}) {
		if s, ok := en[id]; ok && s.Enabled != nil && !*s.Enabled {
			d.Blocked = append(d.Blocked, host.Finding{
				Problem: fmt.Sprintf("the server %s is disabled (%s)", id, f),
				Fix:     "gemini mcp enable " + id,
			})
		}
	}
	return d
}

// names reports whether an entry of mcp.allowed or mcp.excluded names
// server, as Gemini CLI matches them (case aside; an extension's server
// by its plain name too).
func names(entry, server string) bool {
	e, s := strings.ToLower(strings.TrimSpace(entry)), strings.ToLower(server)
	if e == s {
		return true
	}
	i := strings.LastIndex(s, ":")
	return strings.HasPrefix(s, "ext:") && e == s[i+1:]
}

// trustedFoldersFile is Gemini CLI's trustedFolders.json.
func trustedFoldersFile(o host.Options) string {
	if p := o.Env("GEMINI_CLI_TRUSTED_FOLDERS_PATH"); p != "" {
		return p
	}
	return filepath.Join(geminiHome(o), ".gemini", "trustedFolders.json")
}

// folderTrusted decides as Gemini CLI 0.61.0 does (checkPathTrust)
// whether it trusts the folder dir: the environment first, then, with
// folder trust on (security.folderTrust.enabled, default true), the
// longest rule of trustedFolders.json that holds dir; no rule is not
// trusted. why says what decided it.
// A trustedFolders.json it cannot parse is err: Gemini CLI stops at
// start.
func folderTrusted(o host.Options, ls []settings, dir string) (ok bool, why string, err error) {
	if o.Env("GEMINI_RESTRICTED_MODE") == "true" || o.Env("GEMINI_CLI_TRUST_WORKSPACE") == "false" {
		return false, "the environment says so", nil
	}
	if o.Env("GEMINI_CLI_TRUST_WORKSPACE") == "true" {
		return true, "", nil
	}
	enabled := true
	for _, l := range ls { // system defaults, user, system: the last word wins
		if e := l.Security.FolderTrust.Enabled; e != nil {
			enabled = *e
		}
	}
	if !enabled || dir == "" {
		return true, "", nil
	}
	f := trustedFoldersFile(o)
	var rules map[string]string
	if _, err := readSettings(f, &rules); err != nil {
		return false, "", err
	}
	real := realPath(dir)
	best, level := -1, ""
	for p, l := range rules {
		eff := p
		if l == "TRUST_PARENT" {
			eff = filepath.Dir(p)
		}
		if sub(realPath(eff), real) && len(p) > best {
			best, level = len(p), l
		}
	}
	switch level {
	case "TRUST_FOLDER", "TRUST_PARENT":
		return true, "", nil
	case "DO_NOT_TRUST":
		return false, "DO_NOT_TRUST in " + f, nil
	}
	return false, "no rule for it in " + f, nil
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// sub reports whether child is parent or under it.
func sub(parent, child string) bool {
	rel, err := filepath.Rel(parent, child)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// enabledExtension reports whether the repository's extension is
// installed in dir/extensions and enabled for the folder cwd (the last
// rule of extension-enablement.json that matches wins; none: enabled).
func enabledExtension(o host.Options, dir, cwd string) bool {
	ext := filepath.Join(dir, "extensions", extension)
	if _, err := os.Stat(filepath.Join(ext, "gemini-extension.json")); err != nil {
		return false
	}
	var cfg map[string]struct {
		Overrides []string `json:"overrides"`
	}
	host.ReadJSON(filepath.Join(dir, "extensions", "extension-enablement.json"), &cfg)
	enabled := true
	path := slashed(cwd)
	for _, rule := range cfg[extension].Overrides {
		off := strings.HasPrefix(rule, "!")
		base := strings.TrimPrefix(rule, "!")
		subdirs := strings.HasSuffix(base, "*")
		base = slashed(strings.TrimSuffix(base, "*"))
		glob := base
		if subdirs {
			glob += "*"
		}
		if globRegexp(glob).MatchString(path) {
			enabled = !off
		}
	}
	return enabled
}

// slashed is p with a leading and a trailing slash, as Gemini CLI matches
// enablement rules.
func slashed(p string) string {
	p = filepath.ToSlash(p)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p
}

// globRegexp is Gemini CLI's globToRegex: "*" (with the slash before it)
// matches anything, or nothing.
func globRegexp(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		switch {
		case glob[i] == '/' && i+1 < len(glob) && glob[i+1] == '*':
			b.WriteString("(/.*)?")
			i++
		case glob[i] == '*':
			b.WriteString("(.*)?")
		default:
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
