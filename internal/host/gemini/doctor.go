package gemini

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

var _ host.Doctor = Host{}

// extension is the repository's extension's name (gemini-extension.json).
const extension = "tasksessiond"

// Dialect is Gemini CLI, or a fork of it that reads its settings, trusts
// folders and installs the extension the same way (Qwen Code), as doctor
// reads it.
type Dialect struct {
	Title, Name string // "Gemini CLI", "gemini": its title, and its command's (and setup's) name
	Dir         string // its folder: ~/.gemini (a project's is .gemini, after Name)
	// the administrator's settings and defaults, trustedFolders.json
	System, Defaults, Trusted string
	// Qwen Code (0.24.4) differs from Gemini CLI (0.61.0) so: folder
	// trust is off unless security.folderTrust.enabled, and no
	// environment variable decides it; a byte order mark is skipped, a
	// workspace's settings.json it cannot parse is reset to {} (not
	// fatal); the system files are read whoever may write them;
	// mcp.allowed and mcp.excluded name a server exactly or by a wildcard
	// ("*", "?"), an extension's by its own name, and mcp.allowed is the
	// lists of every file joined; "disableAllHooks" turns the hooks off.
	Qwen bool
}

// Diagnose finds what keeps Gemini CLI from offering the tools or running
// the hooks.
func (h Host) Diagnose(o host.Options) host.Diagnosis {
	return Dialect{Title: "Gemini CLI", Name: "gemini", Dir: filepath.Join(cmp.Or(o.Env("GEMINI_CLI_HOME"), o.Home()), ".gemini"),
		System:   cmp.Or(o.Env("GEMINI_CLI_SYSTEM_SETTINGS_PATH"), "/etc/gemini-cli/settings.json"),
		Defaults: o.Env("GEMINI_CLI_SYSTEM_DEFAULTS_PATH"), Trusted: o.Env("GEMINI_CLI_TRUSTED_FOLDERS_PATH")}.Diagnose(o)
}

// secure reports whether Gemini CLI reads the system file p: it skips
// one that (or a folder above which) others than its owner may write
// (isFileAndDirectorySecureSync, in short).
var secure = func(p string) bool {
	for _, q := range []string{p, host.RealPath(p)} {
		for _, d := range host.Upward(q, nil) {
			if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o022 != 0 {
				return false
			}
		}
	}
	return true
}

// read reads the settings file p into out as Gemini CLI does
// (strip-json-comments, then JSON.parse): one that is not there is
// nothing (false); one it cannot parse, a trailing comma, an empty file,
// a directory, a byte order mark (Qwen Code skips it), is an error. A
// member of another type than doctor expects is left out, as Gemini CLI
// only warns of it.
func (d Dialect) read(p string, out any) (bool, error) {
	if _, err := os.Stat(p); err != nil {
		return false, nil // existsSync: false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return false, fmt.Errorf("%s: %w", p, errors.Unwrap(err))
	}
	if d.Qwen {
		b = bytes.TrimPrefix(b, []byte("\ufeff"))
	}
	switch {
	case bytes.HasPrefix(b, []byte("\ufeff")):
		return false, fmt.Errorf("%s: it begins with a byte order mark", p)
	case len(bytes.TrimSpace(b)) == 0:
		return false, fmt.Errorf("%s: it is empty, which is no JSON", p)
	}
	_, err = config.ParseJSON(b, config.JSONComments)
	var te *json.UnmarshalTypeError
	if err == nil {
		if err = host.DecodeJSON(b, out); errors.As(err, &te) {
			err = nil
		}
	}
	if err != nil {
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
	DisableAllHooks *bool `json:"disableAllHooks"`
	Tools           struct {
		ApprovalMode string `json:"approvalMode"`
	} `json:"tools"`
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
// keeps the host from offering the tools or running the hooks: the
// folder untrusted (it then starts no MCP server, the user's included,
// and reads no project settings), the server excluded or not allowed,
// disabled with "gemini mcp disable", hooks off, a settings file it
// cannot read.
func (g Dialect) Diagnose(o host.Options) host.Diagnosis {
	g.Defaults = cmp.Or(g.Defaults, filepath.Join(filepath.Dir(g.System), "system-defaults.json"))
	g.Trusted = cmp.Or(g.Trusted, filepath.Join(g.Dir, "trustedFolders.json"))
	d := host.Diagnosis{Installed: host.OnPath(g.Name) || host.Holds(g.Dir)}
	cwd := host.ProjectDir(o)
	stops := func(p string, err error) {
		d.Block(g.Title+" cannot read "+err.Error()+": it stops at start (\"Please fix the configuration file(s)\")",
			"repair "+p+" (JSON, comments allowed: no trailing comma, no byte order mark), or remove it")
	}
	// the files as the host merges them for the folder's trust, lowest
	// first (the system's settings override the user's), then the
	// workspace's, read whether trusted or not: a file it cannot read
	// stops it at start, whatever the folder's trust
	var ls []settings
	read := func(p string, system bool) (settings, bool) {
		s := settings{path: p}
		if system && !g.Qwen && !secure(p) {
			return s, false // Gemini CLI skips it, with a warning
		}
		ok, err := g.read(p, &s)
		if err != nil {
			stops(p, err)
		}
		return s, ok
	}
	user := filepath.Join(g.Dir, "settings.json")
	for _, p := range []string{g.Defaults, user, g.System} {
		if s, ok := read(p, p != user); ok {
			ls = append(ls, s)
		}
	}
	trusted, why, terr := g.folderTrusted(o, ls, cwd)
	if terr != nil {
		stops(g.Trusted, terr)
	}
	if ws := filepath.Join(cwd, "."+g.Name, "settings.json"); cwd != "" && host.RealPath(ws) != host.RealPath(user) {
		s := settings{path: ws}
		ok, err := g.read(ws, &s)
		switch {
		case err != nil && g.Qwen:
			d.Block(g.Title+" cannot read "+err.Error()+": it puts the file aside (.corrupted) and starts with none of it", "repair "+ws+" (JSON, comments allowed: no trailing comma)")
		case err != nil:
			stops(ws, err)
		case ok && trusted:
			ls = append(ls, s)
		}
	}
	if g.Qwen || !enabledExtension(g.Dir, cwd) { // Gemini CLI's extension's server has a name of its own
		g.projectServer(&d, o, ls, cwd)
	}
	server := Server
	if enabledExtension(g.Dir, cwd) {
		d.Route = "the extension " + extension
		if !g.Qwen {
			server = "ext:" + extension + ":" + Server
		}
		for _, l := range ls {
			for n, s := range l.MCPServers {
				if host.RunsTasksessiond(append([]string{s.Command}, s.Args...), o.Bin, "mcp") {
					d.Duplicates = append(d.Duplicates, host.Finding{
						Problem: fmt.Sprintf("the MCP server %s in %s runs tasksessiond mcp beside the extension's: two bridges start, and the model gets the tools twice", n, l.path),
						Fix:     host.Command("tasksessiond", "setup", g.Name, "--uninstall") + " (or, to keep setup's: " + g.Name + " extensions uninstall " + extension + ")",
					})
				}
			}
		}
		slices.SortFunc(d.Duplicates, func(a, b host.Finding) int { return strings.Compare(a.Problem, b.Problem) })
	}
	if !trusted && terr == nil {
		d.Block(fmt.Sprintf("%s does not trust the folder %s (%s): it starts no MCP server there, yours included", g.Title, cwd, why),
			"trust the folder when "+g.Title+" asks (or /permissions), or add \""+cwd+"\": \"TRUST_FOLDER\" to "+g.Trusted)
	}
	names := func(entry string) bool { return g.names(entry, server) }
	// Qwen Code joins the mcp.allowed of every file: one naming the
	// server lets it through (Gemini CLI checks each)
	joined := g.Qwen && slices.ContainsFunc(ls, func(l settings) bool { return slices.ContainsFunc(l.MCP.Allowed, names) })
	hooksOn := !o.NoHook || d.Route != ""
	// Qwen Code keeps one "disableAllHooks", the last word of the files
	// as it merges them: the workspace's over the user's, the system's
	// over both; offIn is the file that said true ("" none)
	var offIn string
	var said *bool
	for _, system := range []bool{false, true} {
		for _, l := range ls {
			if v := l.DisableAllHooks; v != nil && (l.path == g.System) == system {
				said, offIn = v, l.path
			}
		}
	}
	if said == nil || !*said {
		offIn = ""
	}
	for _, l := range ls {
		if l.Admin.MCP.Enabled != nil && !*l.Admin.MCP.Enabled {
			d.Block(fmt.Sprintf(`"admin": {"mcp": {"enabled": false}} in %s: %s starts no MCP server`, l.path, g.Title), "ask whoever keeps "+l.path+" to allow MCP servers")
		}
		if i := slices.IndexFunc(l.MCP.Excluded, names); i >= 0 {
			d.Block(fmt.Sprintf("mcp.excluded in %s names the server %s: %s does not start it", l.path, server, g.Title),
				fmt.Sprintf("remove %q from mcp.excluded in %s", l.MCP.Excluded[i], l.path))
		}
		if l.MCP.Allowed != nil && !joined && !slices.ContainsFunc(l.MCP.Allowed, names) {
			d.Block(fmt.Sprintf("mcp.allowed in %s leaves out the server %s: %s starts only the servers it names", l.path, server, g.Title),
				fmt.Sprintf("add %q to mcp.allowed in %s", server, l.path))
		}
		switch off := fmt.Sprintf(" in %s: %s runs no hook, so the list is not given back after resume or compression", l.path, g.Title); {
		case !hooksOn:
		case g.Qwen && l.path == offIn:
			d.Block(`"disableAllHooks": true`+off, fmt.Sprintf(`remove "disableAllHooks" from %s`, l.path))
		case g.Qwen:
		case l.HooksConfig.Enabled != nil && !*l.HooksConfig.Enabled:
			d.Block(`"hooksConfig": {"enabled": false}`+off, fmt.Sprintf(`remove "hooksConfig.enabled" from %s`, l.path))
		case slices.Contains(l.HooksConfig.Disabled, "tasksessiond"):
			d.Block(fmt.Sprintf(`hooksConfig.disabled in %s names the hook "tasksessiond": %s does not run it`, l.path, g.Title),
				fmt.Sprintf(`remove "tasksessiond" from hooksConfig.disabled in %s`, l.path))
		}
	}
	var en map[string]struct {
		Enabled *bool `json:"enabled"`
	}
	f := filepath.Join(g.Dir, "mcp-server-enablement.json")
	host.ReadJSON(f, &en)
	// keyed by the server's id, lower case (an extension's: either form)
	for _, id := range slices.Compact([]string{strings.ToLower(server), Server}) {
		if s, ok := en[id]; ok && s.Enabled != nil && !*s.Enabled {
			d.Block(fmt.Sprintf("the server %s is disabled (%s)", id, f), g.Name+" mcp enable "+id)
		}
	}
	return d
}

// names reports whether an entry of mcp.allowed or mcp.excluded names
// server: as Gemini CLI matches them, case aside, an extension's server
// by its plain name too; as Qwen Code does, exactly or by a wildcard.
func (g Dialect) names(entry, server string) bool {
	if g.Qwen {
		return host.Wildcard(entry).MatchString(server)
	}
	e, s := strings.ToLower(strings.TrimSpace(entry)), strings.ToLower(server)
	i := strings.LastIndex(s, ":")
	return e == s || strings.HasPrefix(s, "ext:") && e == s[i+1:]
}

// folderTrusted decides as the host does (Gemini CLI 0.61.0's
// checkPathTrust) whether it trusts the folder dir: Gemini CLI's
// environment first, then, with folder trust on
// (security.folderTrust.enabled, by default Gemini CLI's but not Qwen
// Code's), the longest rule of trustedFolders.json that holds dir; no
// rule is not trusted. why says what decided it. A trustedFolders.json it
// cannot parse is err: the host stops at start.
func (g Dialect) folderTrusted(o host.Options, ls []settings, dir string) (ok bool, why string, err error) {
	switch {
	case g.Qwen:
	case o.Env("GEMINI_RESTRICTED_MODE") == "true" || o.Env("GEMINI_CLI_TRUST_WORKSPACE") == "false":
		return false, "the environment says so", nil
	case o.Env("GEMINI_CLI_TRUST_WORKSPACE") == "true":
		return true, "", nil
	}
	enabled := !g.Qwen
	for _, l := range ls { // system defaults, user, system: the last word wins
		if e := l.Security.FolderTrust.Enabled; e != nil {
			enabled = *e
		}
	}
	if !enabled || dir == "" {
		return true, "", nil
	}
	var rules map[string]string
	if _, err := g.read(g.Trusted, &rules); err != nil {
		return false, "", err
	}
	real := host.RealPath(dir)
	best, level := -1, ""
	for p, l := range rules {
		eff := p
		if l == "TRUST_PARENT" {
			eff = filepath.Dir(p)
		}
		if rel, err := filepath.Rel(host.RealPath(eff), real); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && len(p) > best {
			best, level = len(p), l
		}
	}
	switch level {
	case "TRUST_FOLDER", "TRUST_PARENT":
		return true, "", nil
	case "DO_NOT_TRUST":
		return false, "DO_NOT_TRUST in " + g.Trusted, nil
	}
	return false, "no rule for it in " + g.Trusted, nil
}

// enabledExtension reports whether the repository's extension is
// installed in dir/extensions (Qwen Code writes its qwen-extension.json
// beside Gemini CLI's manifest) and enabled for the folder cwd (the last
// rule of extension-enablement.json that matches wins; none: enabled).
// Qwen Code keeps its own store of the rules (extension-store/state.json)
// and writes them to extension-enablement.json too.
func enabledExtension(dir, cwd string) bool {
	manifest := strings.TrimPrefix(filepath.Base(dir), ".") + "-extension.json" // Qwen Code's own: qwen-extension.json
	if _, err := os.Stat(filepath.Join(dir, "extensions", extension, manifest)); err != nil {
		return false
	}
	var cfg map[string]struct {
		Overrides []string `json:"overrides"`
	}
	host.ReadJSON(filepath.Join(dir, "extensions", "extension-enablement.json"), &cfg)
	enabled := true
	path := slashed(cwd)
	for _, rule := range cfg[extension].Overrides {
		base, off := strings.CutPrefix(rule, "!")
		glob := slashed(strings.TrimSuffix(base, "*"))
		if strings.HasSuffix(base, "*") {
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

// projectServer finds which server named Server the host starts in the
// folder cwd (the system's settings', else a trusted workspace's, else,
// Qwen Code's (0.24.4) only, the folder's .mcp.json's, else the user's)
// and keeps it from: one that does not run tasksessiond mcp, or, Qwen
// Code's, a workspace's or
// .mcp.json's that the user has not approved ("qwen mcp approve", kept
// in mcpApprovals.json for the folder, bound to a hash of the server's
// settings): it skips that one, "pending approval".
func (g Dialect) projectServer(d *host.Diagnosis, o host.Options, ls []settings, cwd string) {
	if cwd == "" {
		return
	}
	rank := []string{"", "user", "project", "workspace", "system"}
	var path, scope string
	for _, l := range ls {
		if _, ok := l.MCPServers[Server]; ok {
			sc := "user"
			switch l.path {
			case g.System:
				sc = "system"
			case filepath.Join(cwd, "."+g.Name, "settings.json"):
				sc = "workspace"
			}
			if slices.Index(rank, sc) >= slices.Index(rank, scope) {
				path, scope = l.path, sc
			}
		}
	}
	if mj := filepath.Join(cwd, ".mcp.json"); g.Qwen && slices.Index(rank, scope) < slices.Index(rank, "project") {
		var f struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		if qwenFile(mj, &f) && f.MCPServers[Server] != nil {
			path, scope = mj, "project"
		}
	}
	if scope == "" || scope == "user" {
		return // setup's own file, which Check reads
	}
	var f struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	host.ReadJSON(path, &f)
	raw := f.MCPServers[Server]
	var s struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	json.Unmarshal(raw, &s)
	if !host.RunsTasksessiond(append([]string{s.Command}, s.Args...), o.Bin, "mcp") {
		d.Block(fmt.Sprintf("the MCP server %s in %s, which does not run tasksessiond mcp, overrides setup's: %s starts that one in %s", Server, path, g.Title, cwd),
			fmt.Sprintf("remove mcpServers.%s from %s, or rename it", Server, path))
		return
	}
	var mode, system string // tools.approvalMode: the system's over the others' (the workspace's last)
	for _, l := range ls {
		if m := l.Tools.ApprovalMode; m != "" && l.path == g.System {
			system = m
		} else if m != "" {
			mode = m
		}
	}
	if !g.Qwen || scope != "workspace" && scope != "project" || cmp.Or(system, mode) == "yolo" {
		return // in YOLO mode (tools.approvalMode, or --yolo) it asks no approval
	}
	file := cmp.Or(o.Env("QWEN_CODE_MCP_APPROVALS_PATH"), filepath.Join(g.Dir, "mcpApprovals.json"))
	var approvals map[string]map[string]struct {
		Hash   string `json:"hash"`
		Status string `json:"status"`
	}
	qwenFile(file, &approvals)
	a, ok := approvals[host.RealPath(cwd)][Server]
	// as its getState: a decision counts only while the hash it was
	// bound to is the server's now; an edit since makes it pending again
	hash := serverHash(raw, scope == "project")
	if ok && a.Status == "approved" && a.Hash == hash {
		return
	}
	state := "not approved for the folder"
	switch {
	case ok && a.Hash != hash && a.Status == "rejected":
		state = "changed since it was rejected"
	case ok && a.Hash != hash:
		state = "changed since it was approved"
	case ok && a.Status == "rejected":
		state = "rejected for the folder"
	}
	d.Block(fmt.Sprintf("the MCP server %s in %s is %s (%s): %s skips it, \"pending approval\", until it is approved", Server, path, state, file, g.Title),
		fmt.Sprintf("%s mcp approve %s (in %s), or approve it when %s asks at start", g.Name, Server, cwd, g.Title))
}

// serverHash is Qwen Code's hashMcpServerConfig (0.24.4): the SHA-256
// of the server's settings as JSON.stringify writes them, keys sorted,
// without "scope", "extensionName" and "description". A .mcp.json's
// server (claude) is hashed as Qwen Code reads it: in its own form.
func serverHash(raw json.RawMessage, claude bool) string {
	var v map[string]any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	if claude {
		v = claudeServer(v)
	}
	delete(v, "scope")
	delete(v, "extensionName")
	delete(v, "description")
	var b strings.Builder
	stringify(&b, v)
	return fmt.Sprintf("%x", sha256.Sum256([]byte(b.String())))
}

// claudeServer is Qwen Code's normalizeClaudeMcpServer: a server of a
// .mcp.json, written for Claude Code, in Qwen Code's form. One that runs
// a command loses "type" (but "sdk"); one with a "url" gets it as
// "httpUrl" if its type is "http", else as "url".
func claudeServer(s map[string]any) map[string]any {
	truthy := func(k string) bool { // JavaScript's truth, of a JSON value
		switch v := s[k].(type) {
		case nil:
			return false
		case bool:
			return v
		case float64:
			return v != 0
		case string:
			return v != ""
		}
		return true
	}
	typ, typed := s["type"]
	out := maps.Clone(s)
	switch url, isURL := s["url"].(string); {
	case truthy("command") || truthy("httpUrl") || truthy("tcp"):
		if typed && typ != "sdk" {
			delete(out, "type")
		}
	case isURL:
		delete(out, "url")
		if typ != "sdk" {
			delete(out, "type")
		}
		if typ == "http" {
			out["httpUrl"] = url
		} else {
			out["url"] = url
		}
	}
	return out
}

// stringify writes v, a JSON value as encoding/json decodes it, as
// JavaScript's JSON.stringify does with the keys of each object sorted
// (by UTF-16 code units, as Array.prototype.sort, into an object that
// lists its array index keys first, "9" before "10"): no space, numbers in
// ECMAScript's form (-0 as 0), only the quote, the backslash and control
// characters escaped.
func stringify(b *strings.Builder, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := slices.Collect(maps.Keys(v))
		slices.SortFunc(keys, func(x, y string) int {
			// an object lists its array index keys first, by value
			ix, xok := arrayIndex(x)
			iy, yok := arrayIndex(y)
			switch {
			case xok && yok:
				return cmp.Compare(ix, iy)
			case xok:
				return -1
			case yok:
				return 1
			}
			return slices.Compare(utf16.Encode([]rune(x)), utf16.Encode([]rune(y)))
		})
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			stringify(b, k)
			b.WriteByte(':')
			stringify(b, v[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			stringify(b, e)
		}
		b.WriteByte(']')
	case string:
		b.WriteByte('"')
		for _, r := range v {
			switch r {
			case '"', '\\':
				b.WriteByte('\\')
				b.WriteRune(r)
			case '\b':
				b.WriteString(`\b`)
			case '\t':
				b.WriteString(`\t`)
			case '\n':
				b.WriteString(`\n`)
			case '\f':
				b.WriteString(`\f`)
			case '\r':
				b.WriteString(`\r`)
			default:
				if r < 0x20 {
					fmt.Fprintf(b, `\u%04x`, r)
				} else {
					b.WriteRune(r)
				}
			}
		}
		b.WriteByte('"')
	case float64:
		if v == 0 { // -0 too, which JSON.stringify writes as 0
			v = 0
		}
		j, _ := json.Marshal(v) // ECMAScript's form
		b.Write(j)
	default: // a bool, null
		j, _ := json.Marshal(v)
		b.Write(j)
	}
}

// arrayIndex is the value of k if it is an array index as JavaScript's
// objects order their keys: a canonical integer below 2^32-1.
func arrayIndex(k string) (uint64, bool) {
	n, err := strconv.ParseUint(k, 10, 32)
	return n, err == nil && n < 1<<32-1 && strconv.FormatUint(n, 10) == k
}

// qwenFile reads a file Qwen Code reads with strip-json-comments and
// JSON.parse, no byte order mark skipped (.mcp.json, mcpApprovals.json),
// into out: false when it is not there or Qwen Code cannot parse it (a
// trailing comma, an empty file), which Qwen Code then reads as holding
// nothing.
func qwenFile(p string, out any) bool {
	b, err := os.ReadFile(p)
	if err != nil || bytes.HasPrefix(b, []byte("\ufeff")) || len(bytes.TrimSpace(b)) == 0 {
		return false
	}
	if _, err := config.ParseJSON(b, config.JSONComments); err != nil {
		return false
	}
	return host.DecodeJSON(b, out) == nil
}
