package codex_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/codex"
)

// projectEnv is a user's HOME with $CODEX_HOME in it, and a project.
type projectEnv struct {
	home, codexHome, project string
}

func newProjectEnv(t *testing.T) projectEnv {
	t.Helper()
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	e := projectEnv{home: filepath.Join(root, "home"), project: filepath.Join(root, "project")}
	e.codexHome = filepath.Join(e.home, ".codex")
	require.NoError(t, os.MkdirAll(e.codexHome, 0o700))
	require.NoError(t, os.MkdirAll(e.project, 0o700))
	return e
}

func (e projectEnv) options(more ...func(*host.Options)) host.Options {
	o := host.Options{Project: e.project, Bin: "/opt/tsd", Socket: "/run/tsd.sock", Getenv: func(k string) string {
		switch k {
		case "HOME":
			return e.home
		case "CODEX_HOME":
			return e.codexHome
		}
		return ""
	}}
	for _, f := range more {
		f(&o)
	}
	return o
}

func (e projectEnv) userTOML() string     { return filepath.Join(e.codexHome, "config.toml") }
func (e projectEnv) projectTOML() string  { return filepath.Join(e.project, ".codex", "config.toml") }
func (e projectEnv) projectHooks() string { return filepath.Join(e.project, ".codex", "hooks.json") }

func apply(t *testing.T, o host.Options) *host.Plan {
	t.Helper()
	p, err := codex.Host{}.Plan(o)
	require.NoError(t, err)
	require.NoError(t, p.Apply())
	return p
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func write(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
}

func TestSetupProject(t *testing.T) {
	// Ensures setup --project puts the server in the project's
	// .codex/config.toml, the hook in its .codex/hooks.json and the
	// hook's trust (keyed by that hooks.json) in the user's config.toml,
	// in a block named after the project, keeping every byte of the
	// user's file; a second run changes nothing, and --uninstall gives the
	// user's file back and removes the project files it made.
	t.Parallel()
	e := newProjectEnv(t)
	user := "# mine\nmodel = \"o3\" # the best\n\n[projects." + `"` + e.project + `"` + "]\ntrust_level = \"trusted\"\n"
	write(t, e.userTOML(), user)

	p := apply(t, e.options())
	assert.Contains(t, strings.Join(p.Notes, "\n"), "is trusted in "+e.userTOML())

	got := readFile(t, e.userTOML())
	require.True(t, strings.HasPrefix(got, user), got)
	command := "/opt/tsd hook codex --socket /run/tsd.sock"
	assert.Equal(t, user+"\n"+
		`# >>> tasksessiond project `+e.project+` >>> (added by "tasksessiond setup"; "--uninstall" removes it)`+"\n"+
		`[hooks.state."`+e.projectHooks()+`:session_start:0:0"]`+"\n"+
		"enabled = true\n"+
		`trusted_hash = "`+codex.HookTrustHash("session_start", "", command, 600)+`"`+"\n"+
		"# <<< tasksessiond project "+e.project+" <<<\n", got)
	assert.Equal(t, `# >>> tasksessiond >>> (added by "tasksessiond setup"; "--uninstall" removes it)`+"\n"+
		"[mcp_servers.tasks]\n"+
		`command = "/opt/tsd"`+"\n"+
		`args = ["mcp", "--socket", "/run/tsd.sock"]`+"\n"+
		`default_tools_approval_mode = "approve"`+"\n"+
		"startup_timeout_sec = 30\n"+
		"[mcp_servers.tasks.env]\n"+
		`TASKSESSIOND_SOCKET = "/run/tsd.sock"`+"\n"+
		"# <<< tasksessiond <<<\n", readFile(t, e.projectTOML()))
	assert.Contains(t, readFile(t, e.projectHooks()), `"command": "`+command+`"`)
	assert.NoFileExists(t, filepath.Join(e.codexHome, "hooks.json"))

	again, err := codex.Host{}.Plan(e.options())
	require.NoError(t, err)
	assert.False(t, again.Changed(), "a second setup would change %v", again.Steps)

	apply(t, e.options(func(o *host.Options) { o.Uninstall = true }))
	assert.Equal(t, user, readFile(t, e.userTOML()))
	assert.NoFileExists(t, e.projectTOML())
	assert.NoFileExists(t, e.projectHooks())
}

func TestSetupProjectKeepsTheProjectsFiles(t *testing.T) {
	// Ensures the project's own config.toml and hooks.json keep their
	// bytes (setup's block appended, its hook added beside the project's)
	// and get them back on --uninstall; the hook's trust is keyed by its
	// group's index, after the project's own.
	t.Parallel()
	e := newProjectEnv(t)
	projectTOML := "# the team's settings\nmodel_reasoning_effort = \"high\"\n"
	projectHooks := "{\n  \"hooks\": {\n    \"SessionStart\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"./scripts/greet\"}]}\n    ]\n  }\n}\n"
	write(t, e.projectTOML(), projectTOML)
	write(t, e.projectHooks(), projectHooks)

	apply(t, e.options())
	assert.True(t, strings.HasPrefix(readFile(t, e.projectTOML()), projectTOML))
	assert.Contains(t, readFile(t, e.projectHooks()), "./scripts/greet")
	assert.Contains(t, readFile(t, e.userTOML()), `[hooks.state."`+e.projectHooks()+`:session_start:1:0"]`)

	apply(t, e.options(func(o *host.Options) { o.Uninstall = true }))
	assert.Equal(t, projectTOML, readFile(t, e.projectTOML()))
	assert.Equal(t, projectHooks, readFile(t, e.projectHooks()))
	assert.NoFileExists(t, e.userTOML(), "--uninstall left the config.toml setup made")
}

func TestSetupProjectBesideTheUsers(t *testing.T) {
	// Ensures a project's block and the user-level one live side by side
	// in the user's config.toml, each removed by its own --uninstall, and
	// that setup says when the user's hooks.json runs the hook too.
	t.Parallel()
	e := newProjectEnv(t)
	user := e.options(func(o *host.Options) { o.Project = "" })
	apply(t, user)
	userLevel := readFile(t, e.userTOML())

	p := apply(t, e.options())
	assert.Contains(t, strings.Join(p.Notes, "\n"), "the SessionStart hook is in "+filepath.Join(e.codexHome, "hooks.json")+" too")
	both := readFile(t, e.userTOML())
	assert.True(t, strings.HasPrefix(both, userLevel), both)

	apply(t, e.options(func(o *host.Options) { o.Uninstall = true }))
	assert.Equal(t, userLevel, readFile(t, e.userTOML()))
	apply(t, e.options(func(o *host.Options) { o.Project, o.Uninstall = "", true }))
	assert.NoFileExists(t, e.userTOML())
}

func TestSetupProjectNoHook(t *testing.T) {
	// Ensures --no-hook sets up the project's server alone, and takes out
	// a hook and its trust an earlier setup added.
	t.Parallel()
	e := newProjectEnv(t)
	apply(t, e.options())
	require.FileExists(t, e.userTOML())
	apply(t, e.options(func(o *host.Options) { o.NoHook = true }))
	assert.Contains(t, readFile(t, e.projectTOML()), "[mcp_servers.tasks]")
	assert.NoFileExists(t, e.projectHooks())
	assert.NoFileExists(t, e.userTOML())
}

func TestSetupProjectTrustNotes(t *testing.T) {
	// Ensures setup leaves the project's trust to the user and says what
	// it means: not trusted (none, or untrusted) is a note that names the
	// fix, and doctor's finding (Diagnose); a git root's trust counts for a
	// directory under it.
	t.Parallel()
	for _, c := range []struct {
		name, projects, want string
		git, trusted         bool
	}{
		{"none", "", "until you trust the project", false, false},
		{"untrusted", `[projects."DIR"]` + "\ntrust_level = \"untrusted\"\n", "is marked untrusted", false, false},
		{"trusted", `[projects."DIR"]` + "\ntrust_level = \"trusted\"\n", "is trusted in", false, true},
		{"git root", `[projects."ROOT"]` + "\ntrust_level = \"trusted\"\n", "is trusted in", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newProjectEnv(t)
			root := e.project
			if c.git {
				require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o700))
				e.project = filepath.Join(root, "sub")
				require.NoError(t, os.Mkdir(e.project, 0o700))
			}
			user := strings.NewReplacer("DIR", e.project, "ROOT", root).Replace(c.projects)
			write(t, e.userTOML(), user)
			p := apply(t, e.options())
			notes := strings.Join(p.Notes, "\n")
			assert.Contains(t, notes, c.want)
			assert.True(t, strings.HasPrefix(readFile(t, e.userTOML()), user), "setup changed the user's trust")
			findings := codex.Host{}.Diagnose(e.options()).Blocked
			if c.trusted {
				assert.Empty(t, findings)
			} else {
				require.Len(t, findings, 1)
				assert.Contains(t, findings[0].Problem, "Codex does not trust the project")
				assert.Contains(t, findings[0].Fix, `trust_level = "trusted"`)
			}
		})
	}
}

func TestSetupProjectPaths(t *testing.T) {
	// Ensures a project reached through a symbolic link is set up under
	// its real path (Codex's working directory, which keys the hook's
	// trust), and that a project whose .codex is $CODEX_HOME is refused:
	// Codex reads that as the user's configuration.
	t.Parallel()
	e := newProjectEnv(t)
	link := filepath.Join(filepath.Dir(e.project), "link")
	require.NoError(t, os.Symlink(e.project, link))
	apply(t, e.options(func(o *host.Options) { o.Project = link }))
	assert.Contains(t, readFile(t, e.userTOML()), `[hooks.state."`+e.projectHooks()+`:session_start:0:0"]`)

	_, err := codex.Host{}.Plan(e.options(func(o *host.Options) { o.Project = e.home }))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is $CODEX_HOME")
	assert.Contains(t, err.Error(), "without --project")
}

// linkedWorktree makes, under root, a git repository's main checkout
// "repo" (its .git a directory) and a linked worktree of it "worktree"
// (its .git a file naming repo/.git/worktrees/worktree), as git worktree
// add leaves them, and returns both.
func linkedWorktree(t *testing.T, root string) (repo, worktree string) {
	t.Helper()
	repo, worktree = filepath.Join(root, "repo"), filepath.Join(root, "worktree")
	admin := filepath.Join(repo, ".git", "worktrees", "worktree")
	require.NoError(t, os.MkdirAll(admin, 0o700))
	write(t, filepath.Join(admin, "gitdir"), filepath.Join(worktree, ".git")+"\n")
	write(t, filepath.Join(worktree, ".git"), "gitdir: "+admin+"\n")
	return repo, worktree
}

func TestSetupProjectWorktree(t *testing.T) {
	// Ensures setup --project in a linked git worktree (or a directory in
	// one) puts the server in its own .codex/config.toml but the hook in
	// the main checkout's .codex/hooks.json at the same place, which is
	// where Codex reads a linked worktree's hooks from, and keys the
	// hook's trust by that file, in a block named after the main
	// checkout's directory (the one a setup there writes: the two never
	// hold the same table twice); it says so. The main checkout's root
	// trusts the worktree; --uninstall takes all of it back.
	t.Parallel()
	for _, sub := range []string{"", "pkg"} {
		t.Run("sub="+sub, func(t *testing.T) {
			t.Parallel()
			e := newProjectEnv(t)
			repo, worktree := linkedWorktree(t, e.project)
			e.project = filepath.Join(worktree, sub)
			require.NoError(t, os.MkdirAll(e.project, 0o700))
			owner := filepath.Join(repo, sub)
			hooks := filepath.Join(owner, ".codex", "hooks.json")
			user := `[projects."` + repo + `"]` + "\ntrust_level = \"trusted\"\n"
			write(t, e.userTOML(), user)

			p := apply(t, e.options())
			notes := strings.Join(p.Notes, "\n")
			assert.Contains(t, notes, repo+" is trusted in")
			assert.Contains(t, notes, "in a linked git worktree of "+repo)
			assert.Contains(t, readFile(t, e.projectTOML()), "[mcp_servers.tasks]")
			assert.NoFileExists(t, e.projectHooks())
			assert.Contains(t, readFile(t, hooks), "hook codex")
			got := readFile(t, e.userTOML())
			assert.Contains(t, got, "# >>> tasksessiond project "+owner+" >>>")
			assert.Contains(t, got, `[hooks.state."`+hooks+`:session_start:0:0"]`)
			assert.Empty(t, codex.Host{}.Check(e.options()))
			assert.Empty(t, codex.Host{}.Diagnose(e.options()).Blocked)

			// Setup in the main checkout there writes the same block.
			main := e.options(func(o *host.Options) { o.Project = owner })
			again, err := codex.Host{}.Plan(main)
			require.NoError(t, err)
			require.NoError(t, again.Apply())
			assert.Equal(t, got, readFile(t, e.userTOML()), "setup in the main checkout wrote the hook's trust again")

			// --no-hook in the worktree leaves the main checkout's hook.
			setHooks := readFile(t, hooks)
			noHook := apply(t, e.options(func(o *host.Options) { o.NoHook = true }))
			assert.Contains(t, strings.Join(noHook.Notes, "\n"), "--no-hook leaves the hook there")
			assert.Equal(t, setHooks, readFile(t, hooks), "--no-hook in a worktree took the main checkout's hook")
			assert.Equal(t, got, readFile(t, e.userTOML()), "--no-hook in a worktree took the main checkout's hook's trust")

			apply(t, e.options(func(o *host.Options) { o.Uninstall = true }))
			assert.Equal(t, user, readFile(t, e.userTOML()))
			assert.NoFileExists(t, e.projectTOML())
			assert.NoFileExists(t, hooks)
		})
	}
}

func TestSetupProjectRootMarkers(t *testing.T) {
	// Ensures the trust setup and doctor look for follows the user's
	// project_root_markers, as Codex's does: with [".hg"], a trusted
	// directory holding .hg trusts a directory under it, which with the
	// default markers (.git) it does not; with [] only the directory
	// itself (or its git repository's root) counts.
	t.Parallel()
	for _, c := range []struct {
		name, markers string
		trusted       bool
	}{
		{"default", "", false},
		{"hg", `project_root_markers = [".hg"]` + "\n", true},
		{"none", "project_root_markers = []\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newProjectEnv(t)
			root := e.project
			require.NoError(t, os.Mkdir(filepath.Join(root, ".hg"), 0o700))
			e.project = filepath.Join(root, "sub")
			require.NoError(t, os.Mkdir(e.project, 0o700))
			write(t, e.userTOML(), c.markers+`[projects."`+root+`"]`+"\ntrust_level = \"trusted\"\n")
			p := apply(t, e.options())
			notes := strings.Join(p.Notes, "\n")
			if c.trusted {
				assert.Contains(t, notes, root+" is trusted in")
				assert.Empty(t, codex.Host{}.Diagnose(e.options()).Blocked)
			} else {
				assert.Contains(t, notes, "until you trust the project")
				assert.Len(t, codex.Host{}.Diagnose(e.options()).Blocked, 1)
			}
		})
	}
}

func TestHookTrustHashKeepsShellCharacters(t *testing.T) {
	// Ensures the trust hash is taken over the command as Codex writes it
	// in JSON: <, > and & not escaped as Go escapes them by default (a
	// hook of the user's, "echo ran >> log", was never trusted;
	// e2e/codex TestSetupKeepsTheUsersHookTrusted runs it).
	want := sha256.Sum256([]byte(`{"event_name":"session_start","hooks":[{"async":false,"command":"echo a > b && c < d","timeout":600,"type":"command"}]}`))
	assert.Equal(t, "sha256:"+hex.EncodeToString(want[:]), codex.HookTrustHash("session_start", "", "echo a > b && c < d", 600))
}

func TestUninstallSaysItLeavesAServerTheUserChanged(t *testing.T) {
	// Ensures uninstall leaves the server setup wrote that the user has
	// since changed (it is theirs now), and says so.
	e := newProjectEnv(t)
	o := e.options(func(o *host.Options) { o.Project = "" })
	apply(t, o)
	edited := strings.Replace(readFile(t, e.userTOML()), `args = ["mcp"`, `args = ["mcp", "--verbose"`, 1)
	require.Contains(t, edited, "--verbose")
	write(t, e.userTOML(), edited)

	o.Uninstall = true
	p := apply(t, o)
	assert.Contains(t, readFile(t, e.userTOML()), `"--verbose"`)
	assert.NotContains(t, readFile(t, e.userTOML()), "# >>> tasksessiond")
	require.Len(t, p.Notes, 1, "%q", p.Notes)
	assert.Contains(t, p.Notes[0], "mcp_servers.tasks")
	assert.Contains(t, p.Notes[0], "--verbose")
}

func TestSetupSymlinkedCodexHome(t *testing.T) {
	// Ensures the hook's trust is keyed by the hooks.json under the real
	// path of a $CODEX_HOME that is a symbolic link: Codex 0.169.0
	// canonicalizes CODEX_HOME and reads the trust under that path, so a
	// trust keyed by the link's path left the hook untrusted, skipped
	// silently (seen with codex exec), while doctor said set up.
	e := newProjectEnv(t)
	link := filepath.Join(filepath.Dir(e.home), "codex-link")
	require.NoError(t, os.Symlink(e.codexHome, link))
	o := e.options(func(o *host.Options) {
		o.Project = ""
		o.Getenv = func(k string) string {
			return map[string]string{"HOME": e.home, "CODEX_HOME": link}[k]
		}
	})
	apply(t, o)
	cfg := readFile(t, e.userTOML())
	assert.Contains(t, cfg, `[hooks.state."`+filepath.Join(e.codexHome, "hooks.json")+`:session_start:0:0"]`)
	assert.NotContains(t, cfg, link)
	assert.FileExists(t, filepath.Join(e.codexHome, "hooks.json"))
}

func TestDoctorTrustLevelCodexCannotRead(t *testing.T) {
	// Ensures doctor does not say set up over a config.toml whose
	// trust_level is neither "trusted" nor "untrusted" ("Trusted"):
	// Codex 0.169.0 refuses the whole file ("unknown variant `Trusted`,
	// expected `trusted` or `untrusted`"), starting nothing, where doctor
	// read it as no trust at all and found the user's setup right.
	e := newProjectEnv(t)
	bad := "[projects.\"/elsewhere\"]\ntrust_level = \"Trusted\"\n"
	write(t, e.userTOML(), bad)
	user := e.options(func(o *host.Options) { o.Project = "" })
	apply(t, user)
	problems := codex.Host{}.Check(user)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0].Problem, e.userTOML())
	assert.Contains(t, problems[0].Problem, "Trusted")

	// With --project, the project's config.toml is fine, but Codex
	// reads the user's first and stops there.
	write(t, e.userTOML(), "[projects."+strconv.Quote(e.project)+"]\ntrust_level = \"Trusted\"\n")
	apply(t, e.options())
	blocked := codex.Host{}.Diagnose(e.options()).Blocked
	require.NotEmpty(t, blocked)
	assert.Contains(t, blocked[0].Problem, "cannot read")
	assert.Contains(t, blocked[0].Problem, e.userTOML())
}

func TestDoctorHooksFeatureOff(t *testing.T) {
	// Ensures doctor names "hooks = false" under [features] (or its old
	// name codex_hooks, which "hooks" overrides), in the user's config.toml
	// or a trusted project's layer over it: Codex 0.169.0 then runs no
	// hook ("codex features list": hooks false), and doctor said set up.
	// With --no-hook there is no hook to miss.
	for _, c := range []struct {
		name, user, layer string
		blocked           bool
	}{
		{"Off", "features.hooks = false\n", "", true},
		{"OldNameOff", "[features]\ncodex_hooks = false\n", "", true},
		{"NewNameWins", "features.codex_hooks = false\nfeatures.hooks = true\n", "", false},
		{"LayerTurnsItOn", "features.hooks = false\n", "features.hooks = true\n", false},
		{"LayerTurnsItOff", "", "features.hooks = false\n", true},
		{"LayerOldNameUnderNewName", "features.hooks = false\n", "features.codex_hooks = true\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newProjectEnv(t)
			write(t, e.userTOML(), c.user+"[projects."+strconv.Quote(e.project)+"]\ntrust_level = \"trusted\"\n")
			o := e.options()
			apply(t, o)
			if c.layer != "" {
				write(t, e.projectTOML(), c.layer+readFile(t, e.projectTOML()))
			}
			blocked := codex.Host{}.Diagnose(o).Blocked
			if !c.blocked {
				assert.Empty(t, blocked)
				return
			}
			require.Len(t, blocked, 1)
			assert.Contains(t, blocked[0].Problem, "runs no hook")
			o.NoHook = true
			assert.Empty(t, codex.Host{}.Diagnose(o).Blocked)
		})
	}
}

func TestSetupRefusesTheUsersOwnServerLikeSetups(t *testing.T) {
	// Ensures a [mcp_servers.tasks] the user added by hand ("codex mcp add
	// tasks -- tasksessiond mcp"), one that runs tasksessiond mcp as
	// setup's would, is refused by name and kept, and that uninstall
	// leaves it: setup once took it into its block, and uninstall then
	// removed it, leaving config.toml empty. Setup's own server, moved out
	// of its block by a rewrite of Codex's, is still setup's.
	e := newProjectEnv(t)
	o := e.options(func(o *host.Options) { o.Project, o.Socket = "", "" })
	mine := "[mcp_servers.tasks]\ncommand = \"/opt/tsd\"\nargs = [\"mcp\"]\n"
	write(t, e.userTOML(), mine)
	_, err := codex.Host{}.Plan(o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is a server of yours")
	assert.Contains(t, err.Error(), "codex mcp remove tasks")
	o.Uninstall = true
	apply(t, o)
	assert.Equal(t, mine, readFile(t, e.userTOML()))

	// setup's own, its block's markers lost to a rewrite: still setup's
	require.NoError(t, os.Remove(e.userTOML()))
	o.Uninstall = false
	apply(t, o)
	var kept []string
	for _, l := range strings.SplitAfter(readFile(t, e.userTOML()), "\n") {
		if !strings.HasPrefix(l, "# ") {
			kept = append(kept, l)
		}
	}
	write(t, e.userTOML(), strings.Join(kept, ""))
	apply(t, o)
	o.Uninstall = true
	apply(t, o)
	_, err = os.Stat(e.userTOML())
	assert.ErrorIs(t, err, os.ErrNotExist, "setup made the file; uninstall takes it back")
}

func TestSetupSetUpAlreadyAfterCodexDropsTheBlocksBeginMarker(t *testing.T) {
	// Ensures that after "codex mcp add" rewrote config.toml, dropping the
	// begin marker of setup's block but keeping its tables (Codex 0.169.0
	// does), setup changes nothing, so doctor says set up, as
	// "codex mcp list" does, where it said setup would add the server;
	// and that uninstall still takes setup's tables out.
	e := newProjectEnv(t)
	o := e.options(func(o *host.Options) { o.Project = "" })
	write(t, e.userTOML(), "model = \"x\"\n")
	apply(t, o)
	var kept []string
	for _, l := range strings.SplitAfter(readFile(t, e.userTOML()), "\n") {
		if !strings.HasPrefix(l, "# >>> ") {
			kept = append(kept, l)
		}
	}
	rewritten := strings.Join(kept, "") + "\n[mcp_servers.other]\ncommand = \"other\"\n"
	rewritten = strings.Replace(rewritten, "startup_timeout_sec = 30\n", "startup_timeout_sec = 30.0\n", 1) // as Codex writes it
	require.Contains(t, rewritten, "= 30.0")
	write(t, e.userTOML(), rewritten)
	p, err := codex.Host{}.Plan(o)
	require.NoError(t, err)
	assert.False(t, p.Changed(), "%v", p.Steps)
	o.Uninstall = true
	apply(t, o)
	got := readFile(t, e.userTOML()) // Codex rewrote it: its bytes are Codex's, its keys the user's
	assert.NotContains(t, got, "tasks")
	assert.Contains(t, got, "model = \"x\"\n")
	assert.Contains(t, got, "[mcp_servers.other]\ncommand = \"other\"\n")
}

func TestSetupLeavesTheUsersOwnHookAndItsTrust(t *testing.T) {
	// Ensures a SessionStart group the user wrote in hooks.json by hand,
	// as setup's would be, and its trust, which Codex wrote in their
	// config.toml when they said yes, are theirs: setup leaves both and
	// writes no trust of its own for it, and uninstall gives back both
	// files' bytes, where setup took the trust into its block and
	// uninstall removed it with the block.
	e := newProjectEnv(t)
	o := e.options(func(o *host.Options) { o.Project, o.Socket = "", "" })
	hooks := filepath.Join(e.codexHome, "hooks.json")
	mineHooks := `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "/opt/tsd hook codex"}]}]}}` + "\n"
	mineTOML := "model = \"o3\"\n\n[hooks.state." + strconv.Quote(hooks+":session_start:0:0") + "]\nenabled = true\ntrusted_hash = " +
		strconv.Quote(codex.HookTrustHash("session_start", "", "/opt/tsd hook codex", 600)) + "\n"
	write(t, hooks, mineHooks)
	write(t, e.userTOML(), mineTOML)

	apply(t, o)
	assert.Equal(t, mineHooks, readFile(t, hooks))
	set := readFile(t, e.userTOML())
	assert.True(t, strings.HasPrefix(set, mineTOML), "the user's trust was moved:\n%s", set)
	assert.Equal(t, 1, strings.Count(set, "[hooks.state."), "%s", set)

	o.Uninstall = true
	apply(t, o)
	assert.Equal(t, mineHooks, readFile(t, hooks))
	assert.Equal(t, mineTOML, readFile(t, e.userTOML()))
}
