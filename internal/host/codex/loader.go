package codex

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// Codex CLI 0.169.0's rules for where it reads what, which setup and
// doctor both follow. docs/HOSTS.md ("In a project") says where in
// openai/codex each comes from; e2e/codex holds each against the CLI.

// home is $CODEX_HOME, else ~/.codex: the user's configuration. Codex
// canonicalizes CODEX_HOME (find_codex_home), symbolic links resolved,
// and keys a hook's trust under that path; ~/.codex it takes as it is.
func home(o host.Options) string {
	if d := o.Dir("CODEX_HOME"); d != "" {
		return host.RealPath(d)
	}
	return filepath.Join(o.Home(), ".codex")
}

// projectDir is the project's directory as Codex names it: absolute, with
// symbolic links resolved (Codex's working directory is the real path,
// and the trust of a project's hook is keyed under it).
func projectDir(project string) (string, error) {
	dir, err := filepath.Abs(project)
	if err != nil {
		return "", fmt.Errorf("codex: the project's path: %w", err)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if strings.ContainsAny(dir, "\r\n") {
		return "", fmt.Errorf("codex: the project's path %q holds a line break: setup cannot name it in config.toml", dir)
	}
	return dir, nil
}

// settings is what setup and doctor read of a config.toml.
type settings struct {
	Markers  *[]string `toml:"project_root_markers"`
	Projects map[string]struct {
		TrustLevel trustLevel `toml:"trust_level"`
	} `toml:"projects"`
	Servers  map[string]server `toml:"mcp_servers"`
	Features struct {
		Hooks      *bool `toml:"hooks"`
		CodexHooks *bool `toml:"codex_hooks"` // hooks' old name, which hooks overrides
	} `toml:"features"`
}

// trustLevel is a project's trust_level: Codex refuses a config.toml
// that holds another word than these two (its TrustLevel enum), and
// starts nothing.
type trustLevel string

func (l *trustLevel) UnmarshalText(b []byte) error {
	if s := string(b); s != "trusted" && s != "untrusted" {
		return fmt.Errorf("trust_level %q: Codex knows only \"trusted\" and \"untrusted\"", s)
	}
	*l = trustLevel(b)
	return nil
}

// server is an MCP server's table.
type server struct {
	Command       string    `toml:"command"`
	Args          []string  `toml:"args"`
	Enabled       *bool     `toml:"enabled"`
	EnabledTools  *[]string `toml:"enabled_tools"`
	DisabledTools *[]string `toml:"disabled_tools"`
}

// readSettings reads the config.toml at path (none: no settings); its
// error does not name the file, which each caller says in its own words.
func readSettings(path string) (settings, error) {
	var s settings
	b, err := config.Read(path)
	if err == nil && b != nil {
		err = config.DecodeTOML(b, &s)
	}
	return s, err
}

// root is the project's root Codex finds for a working directory dir:
// the nearest directory at or above it holding one of the user's
// project_root_markers (by default .git), else dir.
func (s settings) root(dir string) string {
	markers := []string{".git"}
	if s.Markers != nil {
		markers = *s.Markers
	}
	return cmp.Or(nearest(dir, markers...), dir)
}

// trust is the trust Codex finds for dir's .codex/ in the user's settings
// s: the level ("trusted", "untrusted", "" none) under dir, else the
// project's root, else the git repository's root (the main checkout's,
// for a linked worktree), the first it finds, and the key it is under
// (dir for none).
func (s settings) trust(dir string) (level, key string) {
	keys := []string{dir, s.root(dir)}
	if _, repo := gitRoots(dir); repo != "" {
		keys = append(keys, repo)
	}
	for _, k := range keys {
		if p, ok := s.Projects[k]; ok && p.TrustLevel != "" {
			return string(p.TrustLevel), k
		}
	}
	return "", dir
}

// layers are the project config.toml files Codex reads over the user's
// (whose settings s are) in dir, lowest first: the .codex/config.toml of
// each directory from the project's root down to dir, each only where
// Codex trusts that directory and it is not codexHome.
func (s settings) layers(dir, codexHome string) []string {
	root := s.root(dir)
	var out []string
	for _, d := range slices.Backward(host.Upward(dir, func(d string) bool { return d == root })) {
		if level, _ := s.trust(d); level == "trusted" && !same(filepath.Join(d, ".codex"), codexHome) {
			out = append(out, filepath.Join(d, ".codex", "config.toml"))
		}
	}
	return out
}

// hooksFolder is the .codex Codex reads dir's hooks from: dir's own, but
// in a linked worktree the main checkout's directory at the same place
// (root_checkout_hooks_folder_for_dir: a worktree's own hooks.json, and
// hooks in its config.toml, are not read), with main the main checkout's
// root ("" for dir's own).
func hooksFolder(dir string) (folder, main string) {
	checkout, main := gitRoots(dir)
	rel, err := filepath.Rel(checkout, dir)
	if main == "" || main == checkout || err != nil {
		return filepath.Join(dir, ".codex"), ""
	}
	return filepath.Join(main, rel, ".codex"), main
}

// gitRoots finds, as Codex does (resolve_root_git_project_for_trust)
// without running git, the root of the git checkout dir is in and its
// repository's root: the checkout's own when .git is a directory, the
// main checkout's when it is a linked worktree (.git a file "gitdir:
// <main>/.git/worktrees/<name>"), else "".
func gitRoots(dir string) (checkout, repo string) {
	checkout = nearest(dir, ".git")
	dotGit := filepath.Join(checkout, ".git")
	if fi, err := os.Stat(dotGit); checkout == "" || err != nil || fi.IsDir() {
		return checkout, checkout
	}
	b, _ := os.ReadFile(dotGit)
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if gitdir = strings.TrimSpace(gitdir); !ok || gitdir == "" {
		return checkout, ""
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(checkout, gitdir)
	}
	if worktrees := filepath.Dir(host.RealPath(gitdir)); filepath.Base(worktrees) == "worktrees" {
		return checkout, filepath.Dir(filepath.Dir(worktrees))
	}
	return checkout, "" // a submodule's, or another layout: not a linked worktree
}

// nearest is the nearest directory at or above dir holding one of names
// ("" none).
func nearest(dir string, names ...string) string {
	for _, d := range host.Upward(dir, nil) {
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(d, n)); err == nil {
				return d
			}
		}
	}
	return ""
}

// same reports whether two paths name one directory.
func same(a, b string) bool {
	if a == b {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// trustHeader is the table Codex keeps the trust of a SessionStart group's
// only hook in: keyed by the hooks file's path and the group's index.
func trustHeader(hooks string, index int) string {
	return "hooks.state." + tq(fmt.Sprintf("%s:session_start:%d:0", hooks, index))
}

// HookTrustHash is the hash Codex records as a hook's trusted_hash:
// "sha256:" and the hex SHA-256 of the hook's normalized identity as JSON
// with sorted keys (codex-rs/hooks/src/engine/discovery.rs,
// command_hook_hash; codex-rs/config/src/fingerprint.rs, version_for_toml):
// the event's label, the matcher (left out when there is none), and the one
// handler with its timeout made explicit (600 s by default) and async
// false. "codex exec" skips a hook whose hash does not match silently, so
// setup, which the user runs to install the hook, records its trust.
func HookTrustHash(event, matcher, command string, timeoutSec int) string {
	identity := map[string]any{
		"event_name": event,
		"hooks":      []any{map[string]any{"type": "command", "command": command, "timeout": timeoutSec, "async": false}},
	}
	if matcher != "" {
		identity["matcher"] = matcher
	}
	// Go sorts map keys, as Codex's canonical JSON does; it escapes <, >
	// and & unless told not to, which Codex does not (a command "a > b").
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(identity)
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}
