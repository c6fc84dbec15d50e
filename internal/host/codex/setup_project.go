package codex

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// A project's configuration as Codex CLI 0.169.0 reads it (docs/HOSTS.md,
// "In a project", says it whole, with where in openai/codex it comes from;
// e2e/codex holds each point): a project's .codex/ is loaded only when the
// user trusts the project in their config.toml (looked up for the
// directory, the project's root by project_root_markers, then the git
// repository's root); a linked worktree's hooks are read from the main
// checkout's .codex/ at the same place; a hook's trust is read from the
// user's config.toml only. So setup puts the server in the project's
// .codex/config.toml, the hook in the hooks.json Codex reads for it, and
// the hook's trust in a block of the user's config.toml named after the
// directory whose .codex holds that hooks.json. It leaves the project's
// trust to the user (it covers all of .codex/), and says when it is
// missing.

// projectBlock names setup's block in the user's config.toml that holds
// the trust of the hook in the project dir.
func projectBlock(dir string) string { return block + " project " + dir }

// projectDir is the project's directory as Codex names it: absolute, with
// symbolic links resolved (Codex's working directory is the real path,
// and hooks.json's path in the hook's trust is under it).
func projectDir(project string) (string, error) {
	dir, err := filepath.Abs(project)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if strings.ContainsAny(dir, "\r\n") {
		return "", fmt.Errorf("codex: the project's path %q holds a line break: setup cannot name it in config.toml", dir)
	}
	return dir, nil
}

// where are the files Codex's setup edits: for the user, hooks.json and
// config.toml in $CODEX_HOME; for a project (o.Project), the server in its
// .codex/config.toml, the hook in the hooks.json Codex reads for it, and
// the hook's trust in the user's config.toml, in a block named after the
// directory whose .codex holds that hooks.json (owner: a linked worktree
// and its main checkout share it, and one block keeps its trust).
type where struct {
	hooks, serverTOML, userTOML string
	dir, owner, main            string // dir: the project's; main: the main checkout of a linked worktree ("" none)
	shared                      bool   // --no-hook in a linked worktree: the hook is the main checkout's too, and stays
}

func files(o host.Options) (where, error) {
	userDir := home(o)
	w := where{hooks: filepath.Join(userDir, "hooks.json"), serverTOML: filepath.Join(userDir, "config.toml"), userTOML: filepath.Join(userDir, "config.toml")}
	if o.Project == "" {
		return w, nil
	}
	dir, err := projectDir(o.Project)
	if err != nil {
		return w, err
	}
	dotCodex := filepath.Join(dir, ".codex")
	if same(dotCodex, userDir) {
		return w, fmt.Errorf("codex: %s is $CODEX_HOME, which Codex reads as your user configuration, not a project's: run setup without --project", dotCodex)
	}
	hooksDir, main := hooksFolder(dir)
	if same(hooksDir, userDir) {
		return w, fmt.Errorf("codex: %s is a linked worktree of %s, whose .codex Codex reads its hooks from, and that is $CODEX_HOME, your user configuration: run setup without --project", dir, main)
	}
	w.hooks, w.serverTOML = filepath.Join(hooksDir, "hooks.json"), filepath.Join(dotCodex, "config.toml")
	w.dir, w.owner, w.main = dir, filepath.Dir(hooksDir), main
	w.shared = main != "" && o.NoHook && !o.Uninstall
	return w, nil
}

// projectNotes say what a project's setup means: whether Codex trusts
// the project, where a linked worktree's hook went, a hook the user has
// too.
func projectNotes(p *host.Plan, o host.Options, w where, name string) {
	dir := w.dir
	if note := trustNote(w.userTOML, dir); note != "" {
		p.Note("%s", note)
	}
	if w.main != "" && !o.NoHook {
		p.Note("%s is in a linked git worktree of %s: Codex reads its hooks from %s, not from %s, so setup puts the hook there, where it runs in %s too and in each worktree of it whose .codex/ Codex loads (setup --uninstall, here or there, takes it out of all of them)", dir, w.main, w.hooks, filepath.Join(dir, ".codex", "hooks.json"), w.owner)
	}
	if !o.NoHook && userHook(o, name) {
		p.Note("the SessionStart hook is in %s too: in this project Codex runs it twice, and the list comes twice into the conversation; keep one of the two (--no-hook here, or there)", filepath.Join(home(o), "hooks.json"))
	}
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

// trustLevel is the project's trust in the user's config.toml at path:
// the level ("trusted", "untrusted", "" for none) and the project key it
// was found under. Codex looks the trust of a directory's .codex up under
// the directory itself, then the project's root (see projectRoot), then
// the git repository's root (the main checkout's, for a linked
// worktree), and takes the first it finds.
func trustLevel(path, dir string) (level, key string) {
	b, err := config.Read(path)
	if err != nil || b == nil {
		return "", dir
	}
	var cfg struct {
		Markers  *[]string `toml:"project_root_markers"`
		Projects map[string]struct {
			TrustLevel string `toml:"trust_level"`
		} `toml:"projects"`
	}
	if config.DecodeTOML(b, &cfg) != nil {
		return "", dir
	}
	markers := []string{".git"}
	if cfg.Markers != nil {
		markers = *cfg.Markers
	}
	keys := []string{dir, projectRoot(dir, markers)}
	if _, repo := gitRoots(dir); repo != "" {
		keys = append(keys, repo)
	}
	for _, k := range keys {
		if pr, ok := cfg.Projects[k]; ok && pr.TrustLevel != "" {
			return pr.TrustLevel, k
		}
	}
	return "", dir
}

// projectRoot is the project's root as Codex finds it for a working
// directory dir: the nearest directory at or above it holding one of
// markers (the user's project_root_markers, by default .git), else dir.
func projectRoot(dir string, markers []string) string {
	return cmp.Or(nearest(dir, markers...), dir)
}

// nearest is the nearest directory at or above dir holding one of names
// ("" none).
func nearest(dir string, names ...string) string {
	for d := dir; len(names) > 0; d = filepath.Dir(d) {
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(d, n)); err == nil {
				return d
			}
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	return ""
}

// gitRoots finds, as Codex does (codex-rs/git-utils,
// resolve_root_git_project_for_trust) without running git, the root of
// the git checkout dir is in and its repository's root: the checkout's
// own when .git is a directory, the main checkout's when it is a linked
// worktree (.git a file "gitdir: <main>/.git/worktrees/<name>"), else "".
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
	if real, err := filepath.EvalSymlinks(gitdir); err == nil {
		gitdir = real
	}
	if worktrees := filepath.Dir(filepath.Clean(gitdir)); filepath.Base(worktrees) == "worktrees" {
		return checkout, filepath.Dir(filepath.Dir(worktrees))
	}
	return checkout, "" // a submodule's, or another layout: not a linked worktree
}

// hooksFolder is the .codex Codex reads dir's hooks from: dir's own, but
// in a linked worktree the main checkout's directory at the same place
// (codex-rs/config/src/loader/mod.rs, root_checkout_hooks_folder_for_dir:
// a worktree's own hooks.json, and hooks in its config.toml, are not
// read), with main the main checkout's root ("" for dir's own).
func hooksFolder(dir string) (folder, main string) {
	checkout, main := gitRoots(dir)
	if main == "" || main == checkout {
		return filepath.Join(dir, ".codex"), ""
	}
	rel, err := filepath.Rel(checkout, dir)
	if err != nil {
		return filepath.Join(dir, ".codex"), ""
	}
	return filepath.Join(main, rel, ".codex"), main
}

// trustNote says what the project's trust means for what setup wrote.
func trustNote(userTOML, dir string) string {
	level, key := trustLevel(userTOML, dir)
	dotCodex := filepath.Join(dir, ".codex")
	switch level {
	case "trusted":
		return fmt.Sprintf("Codex loads %s only in a trusted project: %s is trusted in %s", dotCodex, key, userTOML)
	case "untrusted":
		return fmt.Sprintf("Codex loads nothing of %s (neither the server nor the hook) while %s is marked untrusted in %s; setup leaves that as it is: trust the project in Codex, or set trust_level = \"trusted\" under [projects.%s] there", dotCodex, key, userTOML, tq(key))
	default:
		return fmt.Sprintf("Codex loads nothing of %s (neither the server nor the hook) until you trust the project: start Codex in %s and trust the folder when it asks, or add to %s:\n[projects.%s]\ntrust_level = \"trusted\"\nSetup does not: that trust covers all of %s, not only what setup wrote", dotCodex, dir, userTOML, tq(dir), dotCodex)
	}
}

// userHook reports whether the user's hooks.json runs the hook.
func userHook(o host.Options, name string) bool {
	b, err := config.Read(filepath.Join(home(o), "hooks.json"))
	ours, _ := groups(b, o.Bin, name)
	return err == nil && len(ours) > 0
}
