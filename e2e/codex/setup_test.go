package codex_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/codex"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

func TestSetup(t *testing.T) {
	// Ensures "tasksessiond setup codex" on a user's config.toml (comments,
	// another MCP server) leaves every byte of it in place and Codex
	// reading it (codex mcp list shows both servers; the model named there
	// is the one asked), gives the model the four tools, runs the hook
	// (trusted); a second run changes no byte, --uninstall gives back the
	// user's file byte for byte (and removes the hooks.json it made), and
	// a config.toml Codex cannot read is refused and left as it was.
	t.Parallel()
	script := planScript()
	h := codex.New(t, codex.Options{Respond: script.Respond, NoSetup: true})
	cfg, hooks := filepath.Join(h.CodexHome, "config.toml"), filepath.Join(h.CodexHome, "hooks.json")
	user := "# my Codex settings\n" + strings.Replace(h.UserConfig("", ""), "\n", " # the model I use\n", 1) +
		"\n# another server of mine, not started here\n[mcp_servers.other]\ncommand = \"other-mcp-server\" # not installed\nenabled = false\n"
	h.WriteFile(cfg, user, 0o600)

	out := h.Setup(t, "codex")
	assert.Contains(t, out, "note: Codex CLI's own update_plan cannot be turned off")
	set := read(t, cfg)
	require.True(t, strings.HasPrefix(set, user), "the user's bytes are not kept in front:\n%s", set)
	setHooks := read(t, hooks)
	h.Setup(t, "codex")
	assert.Equal(t, set, read(t, cfg), "a second setup changed config.toml")
	assert.Equal(t, setHooks, read(t, hooks), "a second setup changed hooks.json")

	list := h.Command(t, 30*time.Second, "mcp", "list", "--json")
	require.NoError(t, list.Err, list.Stderr)
	var servers []struct {
		Name string `json:"name"`
	}
	require.NoError(t, json.Unmarshal([]byte(list.Stdout), &servers), list.Stdout)
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	assert.ElementsMatch(t, []string{"other", "tasks"}, names)

	res := h.Exec(t, "Plan the parser work.")
	assert.Equal(t, "One task planned.", res.Message)
	require.True(t, script.Done(), h.API.Dump())
	main := h.API.Main()
	assert.Equal(t, codex.Model, main[0].Model, "the model of the user's config.toml")
	for _, name := range []string{taskCreate, taskList, taskGet, taskUpdate} {
		assert.True(t, main[1].HasTool(name), "%s not offered after tool_search", name)
	}
	require.NotEmpty(t, h.Hooks(), "the SessionStart hook did not run (is setup's trust hash right?)")
	assert.Equal(t, res.ThreadID, h.Hooks()[0].SessionID)
	assert.Equal(t, []string{"1 pending Write the parser"}, h.Daemon.Subjects(t, res.ThreadID))

	h.Setup(t, "codex", "--uninstall")
	assert.Equal(t, user, read(t, cfg), "--uninstall did not give back the user's config.toml")
	assert.NoFileExists(t, hooks, "--uninstall left the hooks.json setup made")

	bad := user + "[mcp_servers.tasks]\ncommand = \"mine\"\nmodel = \n"
	h.WriteFile(cfg, bad, 0o600)
	msg, err := h.RunTSD([]string{"setup", "codex", "--bin", h.Rec.Bin})
	require.Error(t, err, msg)
	assert.Contains(t, msg, cfg)
	assert.Contains(t, msg, "nothing was changed")
	assert.Equal(t, bad, read(t, cfg))
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// planScript has the model load the tools, create a task, list them and
// say "One task planned.".
func planScript() *modelapi.Script {
	return modelapi.NewScript(
		loadTools,
		modelapi.Call(taskCreate, map[string]any{"subject": "Write the parser"}),
		modelapi.Call(taskList, nil),
		modelapi.Text("One task planned."),
	)
}

// assertPlanned runs planScript in Codex and holds that the model was
// offered the four tools, the SessionStart hook ran, and the task is in
// the daemon's list.
func assertPlanned(t *testing.T, h *codex.Host, script *modelapi.Script) {
	t.Helper()
	res := h.Exec(t, "Plan the parser work.")
	assert.Equal(t, "One task planned.", res.Message)
	require.True(t, script.Done(), h.API.Dump())
	main := h.API.Main()
	for _, name := range []string{taskCreate, taskList, taskGet, taskUpdate} {
		assert.True(t, main[1].HasTool(name), "%s not offered after tool_search", name)
	}
	require.NotEmpty(t, h.Hooks(), "the SessionStart hook did not run (are it and its trust where Codex reads them?)")
	assert.Equal(t, res.ThreadID, h.Hooks()[0].SessionID)
	assert.Equal(t, []string{"1 pending Write the parser"}, h.Daemon.Subjects(t, res.ThreadID))
}

func TestSetupProject(t *testing.T) {
	// Ensures "tasksessiond setup codex --project", run in a project the
	// user trusts in Codex, is all it takes: the server in the project's
	// .codex/config.toml, the hook in its .codex/hooks.json, the hook's
	// trust in the user's config.toml (Codex reads a hook's trust from the
	// user's layer only), every byte of the user's file kept; Codex gives
	// the model the four tools and runs the hook. A second run changes no
	// byte; --uninstall gives back the user's config.toml byte for byte
	// and removes the project files setup made.
	t.Parallel()
	script := planScript()
	h := codex.New(t, codex.Options{Respond: script.Respond, NoSetup: true})
	cfg := filepath.Join(h.CodexHome, "config.toml")
	user := "# my Codex settings\n" + h.UserConfig("", "")
	h.WriteFile(cfg, user, 0o600)
	projectCfg := filepath.Join(h.Project, ".codex", "config.toml")
	projectHooks := filepath.Join(h.Project, ".codex", "hooks.json")

	out := h.Setup(t, "codex", "--project")
	assert.Contains(t, out, "is trusted in "+cfg)
	set := read(t, cfg)
	require.True(t, strings.HasPrefix(set, user), "the user's bytes are not kept in front:\n%s", set)
	assert.Contains(t, set, `[hooks.state."`+projectHooks+`:session_start:0:0"]`)
	assert.NotContains(t, set, "[mcp_servers.", "the server went to the user's config.toml")
	assert.Contains(t, read(t, projectCfg), "[mcp_servers.tasks]")
	assert.NoFileExists(t, filepath.Join(h.CodexHome, "hooks.json"))
	setProject, setHooks := read(t, projectCfg), read(t, projectHooks)
	h.Setup(t, "codex", "--project")
	assert.Equal(t, set, read(t, cfg), "a second setup changed config.toml")
	assert.Equal(t, setProject, read(t, projectCfg), "a second setup changed the project's config.toml")
	assert.Equal(t, setHooks, read(t, projectHooks), "a second setup changed the project's hooks.json")

	assertPlanned(t, h, script)

	h.Setup(t, "codex", "--project", "--uninstall")
	assert.Equal(t, user, read(t, cfg), "--uninstall did not give back the user's config.toml")
	assert.NoFileExists(t, projectCfg, "--uninstall left the project's config.toml setup made")
	assert.NoFileExists(t, projectHooks, "--uninstall left the project's hooks.json setup made")
}

func TestSetupProjectTrust(t *testing.T) {
	// Ensures what "setup codex --project" leaves to the user, and where
	// it records the hook's trust, hold for the real Codex: in a project
	// the user has not trusted, setup and doctor say so and Codex loads
	// neither the server nor the hook; and a hook's trust recorded in the
	// project's own config.toml is not read (the server loads, the hook is
	// skipped), which is why setup records it in the user's; and that a
	// directory under the root project_root_markers names (here .hg, no
	// git) is trusted by that root's trust, as setup reports.
	t.Parallel()
	t.Run("project not trusted", func(t *testing.T) {
		t.Parallel()
		script := modelapi.NewScript(loadTools, modelapi.Text("Nothing to plan with."))
		h := codex.New(t, codex.Options{Respond: script.Respond, NoSetup: true})
		user := h.UserConfig("", "")
		user = user[:strings.Index(user, "[projects.")]
		h.WriteFile(filepath.Join(h.CodexHome, "config.toml"), user, 0o600)
		out := h.Setup(t, "codex", "--project")
		assert.Contains(t, out, "until you trust the project")
		msg, err := h.RunTSD([]string{"doctor", "--project", "--socket", h.Daemon.Socket, "--db", h.Daemon.DB, "--bin", h.Rec.Bin, "codex"})
		require.Error(t, err, msg)
		assert.Contains(t, msg, "Codex does not trust the project "+h.Project)

		h.Exec(t, "Plan the parser work.")
		require.True(t, script.Done(), h.API.Dump())
		main := h.API.Main()
		assert.False(t, main[len(main)-1].HasTool(taskCreate), "the tools of an untrusted project's server were offered")
		assert.Empty(t, h.Hooks(), "an untrusted project's hook ran")
	})
	t.Run("hook trust in the project's config.toml", func(t *testing.T) {
		t.Parallel()
		script := modelapi.NewScript(loadTools, modelapi.Text("Tools found."))
		h := codex.New(t, codex.Options{Respond: script.Respond, NoSetup: true})
		cfg, projectCfg := filepath.Join(h.CodexHome, "config.toml"), filepath.Join(h.Project, ".codex", "config.toml")
		user := read(t, cfg)
		h.Setup(t, "codex", "--project")
		block := strings.TrimPrefix(read(t, cfg), user)
		lines := strings.Split(strings.TrimSpace(block), "\n")
		require.Greater(t, len(lines), 2, block)
		h.WriteFile(cfg, user, 0o600)
		h.WriteFile(projectCfg, read(t, projectCfg)+strings.Join(lines[1:len(lines)-1], "\n")+"\n", 0o600)

		h.Exec(t, "Plan the parser work.")
		require.True(t, script.Done(), h.API.Dump())
		assert.True(t, h.API.Main()[1].HasTool(taskCreate), "the project's server did not load")
		assert.Empty(t, h.Hooks(), "Codex read a hook's trust from the project's config.toml: setup could record it there")
	})
	t.Run("project_root_markers", func(t *testing.T) {
		t.Parallel()
		script := modelapi.NewScript(loadTools, modelapi.Text("Tools found."))
		h := codex.New(t, codex.Options{Respond: script.Respond, NoSetup: true})
		root := h.Project
		h.Mkdir(filepath.Join(root, ".hg"), filepath.Join(root, "sub"))
		user := h.UserConfig("", `project_root_markers = [".hg"]`)
		h.WriteFile(filepath.Join(h.CodexHome, "config.toml"), user, 0o600)
		h.Project = filepath.Join(root, "sub")
		out := h.Setup(t, "codex", "--project")
		assert.Contains(t, out, root+" is trusted in")

		h.Exec(t, "Plan the parser work.")
		require.True(t, script.Done(), h.API.Dump())
		assert.True(t, h.API.Main()[1].HasTool(taskCreate), "the server of a directory under the marked root did not load")
		assert.NotEmpty(t, h.Hooks(), "the hook of a directory under the marked root did not run")
	})
}

func TestSetupKeepsCodexsOwnTables(t *testing.T) {
	// Ensures a table Codex writes into config.toml after setup ("codex
	// mcp add" prints it before the file's last comment: the end of
	// setup's block) is still there, and read by Codex, after setup runs
	// again with other flags and after --uninstall.
	t.Parallel()
	h := codex.New(t, codex.Options{NoSetup: true})
	cfg := filepath.Join(h.CodexHome, "config.toml")
	h.WriteFile(cfg, h.UserConfig("", ""), 0o600)
	h.Setup(t, "codex")
	out := h.Command(t, 60*time.Second, "mcp", "add", "mine", "--", "/bin/echo", "hello")
	require.NoError(t, out.Err, out.Stderr)
	added := read(t, cfg)
	t.Logf("config.toml after codex mcp add:\n%s", added)
	require.Contains(t, added, "[mcp_servers.mine]")
	servers := func() string {
		t.Helper()
		out := h.Command(t, 60*time.Second, "mcp", "list", "--json")
		require.NoError(t, out.Err, out.Stderr)
		return out.Stdout
	}
	assert.Contains(t, servers(), `"mine"`)
	assert.Contains(t, servers(), `"tasks"`)
	// Codex's rewrite may drop the begin marker of setup's block, its
	// tables kept: Codex reads them, and doctor says set up (it said
	// setup would add the server)
	tsd, err := h.Doctor("codex")
	assert.NoError(t, err, tsd)
	assert.Contains(t, tsd, "Codex CLI: set up", "after codex mcp add")

	h.Setup(t, "codex", "--session", "fixed")
	assert.Contains(t, read(t, cfg), "--session", "setup did not write its block again")
	assert.Contains(t, servers(), `"mine"`, "setup again lost the server Codex added")
	assert.Equal(t, 1, strings.Count(read(t, cfg), "# <<< tasksessiond <<<"), "a marker without its pair was left")
	out = h.Command(t, 60*time.Second, "mcp", "add", "mine2", "--", "/bin/echo", "again") // the begin marker lost again
	require.NoError(t, out.Err, out.Stderr)
	said := h.Setup(t, "codex", "--uninstall")
	assert.Contains(t, said, "remove setup's tables")
	assert.NotContains(t, read(t, cfg), "tasksessiond")
	list := servers()
	assert.Contains(t, list, `"mine"`, "--uninstall lost the server Codex added")
	assert.Contains(t, list, `"mine2"`, "--uninstall lost the server Codex added")
	assert.NotContains(t, list, `"tasks"`)
}

func TestSetupInlineTables(t *testing.T) {
	// Ensures a config.toml whose mcp_servers or hooks is an inline table
	// (which Codex cannot extend with a [table] header) is refused with
	// the reason and left as it was, Codex still reading it; written as
	// tables, it is set up and Codex reads both servers.
	t.Parallel()
	h := codex.New(t, codex.Options{NoSetup: true})
	cfg := filepath.Join(h.CodexHome, "config.toml")
	names := func() []string {
		t.Helper()
		out := h.Command(t, 60*time.Second, "mcp", "list", "--json")
		require.NoError(t, out.Err, "codex cannot read config.toml: %s\n%s", out.Stderr, read(t, cfg))
		var servers []struct {
			Name string `json:"name"`
		}
		require.NoError(t, json.Unmarshal([]byte(out.Stdout), &servers), out.Stdout)
		var n []string
		for _, s := range servers {
			n = append(n, s.Name)
		}
		return n
	}
	for _, inline := range []string{"mcp_servers = { gh = { command = \"npx\" } }", "hooks = { state = {} }"} {
		user := h.UserConfig("", inline)
		h.WriteFile(cfg, user, 0o600)
		msg, err := h.RunTSD([]string{"setup", "codex", "--bin", h.Rec.Bin})
		require.Error(t, err, msg)
		assert.Contains(t, msg, "inline table")
		assert.Equal(t, user, read(t, cfg))
		names()
	}
	h.WriteFile(cfg, h.UserConfig("", "")+"[mcp_servers.gh]\ncommand = \"npx\"\n", 0o600)
	h.Setup(t, "codex")
	assert.ElementsMatch(t, []string{"gh", "tasks"}, names())
}

func TestSetupKeepsTheUsersHookTrusted(t *testing.T) {
	// Ensures a SessionStart hook of the user's, added after setup and
	// trusted as Codex records it, still runs (codex exec) after setup
	// with other flags and after --uninstall: its trust, which Codex keys
	// by the hook's index, follows it (issue 51: setup with other flags
	// claimed it, and uninstall left it keyed where the hook no longer is).
	t.Parallel()
	h := codex.New(t, codex.Options{NoSetup: true})
	h.Setup(t, "codex")
	hooks, cfg := filepath.Join(h.CodexHome, "hooks.json"), filepath.Join(h.CodexHome, "config.toml")
	marker := filepath.Join(h.Root, "mine.log")
	command := "echo ran >> " + marker
	var doc map[string]map[string][]any
	require.NoError(t, json.Unmarshal([]byte(read(t, hooks)), &doc))
	doc["hooks"]["SessionStart"] = append(doc["hooks"]["SessionStart"], map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command}}})
	b, err := json.MarshalIndent(doc, "", "  ")
	require.NoError(t, err)
	h.WriteFile(hooks, string(b)+"\n", 0o600)
	h.WriteFile(cfg, read(t, cfg)+"\n[hooks.state."+`"`+hooks+`:session_start:1:0"]`+"\nenabled = true\ntrusted_hash = \""+codex.HookTrustHash("session_start", "", command, 600)+"\"\n", 0o600)
	runs := func() int {
		b, _ := os.ReadFile(marker)
		return strings.Count(string(b), "ran\n")
	}
	h.Exec(t, "Hello.")
	require.Equal(t, 1, runs(), "the user's hook did not run, trusted, before setup ran again")
	h.Setup(t, "codex", "--session", "team")
	h.Exec(t, "Hello.")
	assert.Equal(t, 2, runs(), "the user's hook no longer runs after setup with other flags:\n%s", read(t, cfg))
	h.Setup(t, "codex", "--uninstall")
	h.Exec(t, "Hello.")
	assert.Equal(t, 3, runs(), "the user's hook no longer runs after uninstall:\n%s", read(t, cfg))
}
