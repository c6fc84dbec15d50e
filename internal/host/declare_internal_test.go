package host

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// homeOptions are options whose HOME is a fresh directory, and nothing
// else of the environment.
func homeOptions(t *testing.T) Options {
	t.Helper()
	home := t.TempDir()
	return Options{Bin: "/bin/tasksessiond", Getenv: func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}}
}

// declare plans and applies the entries with o.
func declare(t *testing.T, o Options, es []Entry) *Plan {
	t.Helper()
	p, err := NewPlan(nil, o)
	require.NoError(t, err)
	require.NoError(t, p.Declare(es))
	require.NoError(t, p.Apply())
	return p
}

func TestUninstallKeepsAContainerHoldingAComment(t *testing.T) {
	// Ensures a container setup made, into which the user has since
	// written a comment, is left by uninstall with the comment: it holds
	// something of the user's.
	o := homeOptions(t)
	file := filepath.Join(o.Home(), "settings.json")
	require.NoError(t, os.WriteFile(file, []byte("{\n  \"model\": \"x\"\n}\n"), 0o600))
	es := []Entry{
		{File: file, Dialect: config.JSONComments, Kind: OwnServer, Path: []string{"mcpServers", "tasks"}, Value: Server{Command: o.Bin, Args: []string{"mcp"}}},
		{File: file, Dialect: config.JSONComments, Kind: UserValue, Path: []string{"tools", "todo"}, Value: false},
	}
	declare(t, o, es)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	edited := strings.Replace(string(b), "\"mcpServers\": {", "\"mcpServers\": {\n    // github goes here", 1)
	edited = strings.Replace(edited, "\"tools\": {", "\"tools\": /* mine */ {", 1)
	require.NotEqual(t, string(b), edited)
	require.NoError(t, os.WriteFile(file, []byte(edited), 0o600))

	o.Uninstall = true
	declare(t, o, es)
	b, err = os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(b), "// github goes here")
	assert.Contains(t, string(b), "/* mine */")
	assert.NotContains(t, string(b), "tasksessiond")
	_, err = config.ParseJSON(b, config.JSONComments)
	assert.NoError(t, err)
}

func TestUninstallTakesOneOfAStringTheUserAddedAgain(t *testing.T) {
	// Ensures uninstall takes out the one string setup added: the same
	// string the user added beside it since is the user's, and stays.
	o := homeOptions(t)
	file := filepath.Join(o.Home(), "settings.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"deny": ["Bash"]}`), 0o600))
	es := []Entry{{File: file, Dialect: config.JSON, Kind: UserString, Path: []string{"deny"}, Value: "TodoWrite"}}
	declare(t, o, es)
	require.NoError(t, os.WriteFile(file, []byte(`{"deny": ["Bash", "TodoWrite", "TodoWrite"]}`), 0o600))

	o.Uninstall = true
	declare(t, o, es)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, `{"deny": ["Bash", "TodoWrite"]}`, string(b))
}

func TestUninstallSaysItLeavesAServerTheUserChanged(t *testing.T) {
	// Ensures a server setup added that the user has since changed (an
	// argument, an environment variable of theirs) is left as theirs, and
	// uninstall says so rather than nothing.
	o := homeOptions(t)
	file := filepath.Join(o.Home(), "settings.json")
	es := []Entry{{File: file, Dialect: config.JSONComments, Kind: OwnServer, Path: []string{"mcpServers", "tasks"}, Value: Server{Command: o.Bin, Args: []string{"mcp"}}}}
	declare(t, o, es)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	edited := strings.Replace(string(b), `"mcp"`, `"mcp", "--verbose"`, 1)
	require.NotEqual(t, string(b), edited)
	require.NoError(t, os.WriteFile(file, []byte(edited), 0o600))

	o.Uninstall = true
	p := declare(t, o, es)
	b, err = os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, edited, string(b))
	require.Len(t, p.Notes, 1)
	assert.Contains(t, p.Notes[0], `"tasks"`)
	assert.Contains(t, p.Notes[0], "--verbose")
}

func TestSetupLeavesAFileOfTheUsersWhereItsOwnGoes(t *testing.T) {
	// Ensures a file at the path of a file of setup's that setup did not
	// write, holding other bytes (the user's copy of the plugin, edited),
	// is neither replaced by setup nor removed by uninstall; one setup
	// wrote is updated and removed.
	o := homeOptions(t)
	file := filepath.Join(o.Home(), "plugin", "tasksessiond.ts")
	es := []Entry{{File: file, Kind: OwnFile, Value: []byte("// setup's plugin\n")}}
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, []byte("// mine\n"), 0o644))
	p, err := NewPlan(nil, o)
	require.NoError(t, err)
	assert.ErrorContains(t, p.Declare(es), "a file setup did not write is there")

	u := o
	u.Uninstall = true
	p = declare(t, u, es)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "// mine\n", string(b))
	assert.Len(t, p.Notes, 1)

	require.NoError(t, os.Remove(file))
	declare(t, o, es)
	declare(t, o, []Entry{{File: file, Kind: OwnFile, Value: []byte("// setup's plugin, newer\n")}})
	b, err = os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "// setup's plugin, newer\n", string(b))
	declare(t, u, es)
	assert.NoFileExists(t, file)
}

func TestUninstallGivesBackAnEmptyContainersLayout(t *testing.T) {
	// Ensures an empty object or array of the user's that setup put its
	// own in is given back as the user wrote it, on lines of its own or
	// on one: the file after setup is the same for both, so the record
	// keeps the layout.
	for _, text := range []string{
		"{\n  \"mcpServers\": {\n  },\n  \"hooks\": {\n    \"SessionStart\": [\n    ]\n  },\n  \"deny\": [ ]\n}\n",
		"{\r\n\t\"mcpServers\": {\r\n\t},\r\n\t\"hooks\": {\"SessionStart\": []}, \"deny\": [\r\n\r\n\t]\r\n}\r\n",
		"{\"mcpServers\": {}, \"hooks\": {}, \"deny\": []}",
	} {
		o := homeOptions(t)
		file := filepath.Join(o.Home(), "settings.json")
		require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
		es := []Entry{
			{File: file, Dialect: config.JSONComments, Kind: OwnServer, Path: []string{"mcpServers", "tasks"}, Value: Server{Command: o.Bin, Args: []string{"mcp"}}},
			{File: file, Dialect: config.JSONComments, Kind: UserString, Path: []string{"deny"}, Value: "TodoWrite"},
		}
		declare(t, o, es)
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		require.NotEqual(t, text, string(b))
		declare(t, o, es) // a second run changes nothing

		o.Uninstall = true
		declare(t, o, es)
		b, err = os.ReadFile(file)
		require.NoError(t, err)
		assert.Equal(t, text, string(b))
	}
}

func TestUninstallRemovesTheDirectoriesSetupMade(t *testing.T) {
	// Ensures uninstall removes each directory setup made for its files
	// once they leave it empty, deepest first, and leaves a directory the
	// user had, though empty, and one setup made that holds a file of the
	// user's, until a later uninstall finds it empty; the directories of
	// setup's record go with the record's last edit.
	o := homeOptions(t)
	home := o.Home()
	require.NoError(t, os.Mkdir(filepath.Join(home, ".mine"), 0o755))
	deny := func(file string) Entry {
		return Entry{File: file, Dialect: config.JSON, Kind: UserString, Path: []string{"deny"}, Value: "TodoWrite"}
	}
	es := []Entry{
		{File: filepath.Join(home, ".host", "plugin", "tasksessiond.ts"), Kind: OwnFile, Value: []byte("// setup's plugin\n")},
		deny(filepath.Join(home, ".host", "settings.json")),
		deny(filepath.Join(home, ".mine", "settings.json")),
		deny(filepath.Join(home, ".other", "deep", "settings.json")),
	}
	declare(t, o, es)
	require.DirExists(t, filepath.Join(home, ".host", "plugin"))
	notes := filepath.Join(home, ".other", "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("mine\n"), 0o600))

	o.Uninstall = true
	declare(t, o, es)
	assert.NoDirExists(t, filepath.Join(home, ".host"))
	assert.DirExists(t, filepath.Join(home, ".mine"))
	assert.NoDirExists(t, filepath.Join(home, ".other", "deep"))
	assert.FileExists(t, notes)
	assert.FileExists(t, o.RecordFile(), "the record still names .other")

	require.NoError(t, os.Remove(notes))
	declare(t, o, es)
	assert.NoDirExists(t, filepath.Join(home, ".other"))
	assert.DirExists(t, filepath.Join(home, ".mine"))
	assert.NoDirExists(t, filepath.Join(home, ".local"))
}

func TestUninstallGivesBackTheUsersOwnServerLikeSetups(t *testing.T) {
	// Ensures a server "tasks" the user added by hand before setup, one
	// that runs tasksessiond mcp as setup's would ("qwen mcp add tasks
	// tasksessiond mcp"), is given back by uninstall as they wrote it,
	// where uninstall once removed it with setup's, leaving
	// {"mcpServers": {}}; and that setup again (another --session) and
	// uninstall still give it back.
	o := homeOptions(t)
	file := filepath.Join(o.Home(), "settings.json")
	mine := "{\n  \"mcpServers\": {\n    \"tasks\": {\"command\": \"/bin/tasksessiond\", \"args\": [\"mcp\"]}\n  }\n}\n"
	require.NoError(t, os.WriteFile(file, []byte(mine), 0o600))
	es := func(o Options) []Entry {
		return []Entry{{File: file, Dialect: config.JSONComments, Kind: OwnServer, Path: []string{"mcpServers", "tasks"}, Value: Server{Command: o.Bin, Args: o.MCPArgs()}}}
	}
	read := func() string {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		return string(b)
	}
	for _, session := range []string{"", "team"} {
		o.Session, o.Uninstall = session, false
		declare(t, o, es(o))
		if session != "" {
			assert.Contains(t, read(), `"team"`)
		}
		o.Session = "work"
		declare(t, o, es(o)) // setup again, bound otherwise
		assert.Contains(t, read(), `"work"`)
		o.Uninstall = true
		p := declare(t, o, es(o))
		assert.Equal(t, mine, read(), "session %q", session)
		assert.Contains(t, strings.Join(p.Steps, "\n"), "back to yours")
	}
}

func TestUninstallLeavesAnEmptyFileItNeverTouched(t *testing.T) {
	// Ensures an uninstall that finds nothing of setup's in a user's
	// empty file (written "{ }", or "{}" without a newline) leaves its
	// bytes: it rewrote it as "{}\n", a change with no step to say so.
	// An empty file, or one of white space, is an empty document too.
	for _, text := range []string{"{ }\n", "{}", "{\n}\n", "", "\n\n"} {
		o := homeOptions(t)
		file := filepath.Join(o.Home(), "settings.json")
		require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
		o.Uninstall = true
		p := declare(t, o, []Entry{{File: file, Dialect: config.JSON, Kind: UserString, Path: []string{"deny"}, Value: "TodoWrite"}})
		assert.False(t, p.Changed(), "%q: the plan changes a file", text)
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Equal(t, text, string(b))
	}
}

// hookEntries are a settings file's deny rule, which makes the record
// name the file, and setup's SessionStart hook as o would write it.
func hookEntries(file string, o Options) []Entry {
	hook := HookGroup(Command(append([]string{o.Bin}, o.HookArgs("claude-code")...)...), "")
	return []Entry{
		{File: file, Dialect: config.JSON, Kind: UserString, Path: []string{"deny"}, Value: "TodoWrite"},
		{File: file, Dialect: config.JSON, Kind: OwnHook, Path: []string{"hooks", "SessionStart"}, Value: hook},
	}
}

// claudeCode is a host that is only a name.
type claudeCode struct{ Host }

func (claudeCode) Name() string { return "claude-code" }

func TestSetupRecordsTheHookGroupItAppends(t *testing.T) {
	// Ensures setup records the group it appends, one line a hook path
	// that follows it when another --session replaces it where it is,
	// and that uninstall takes it out with its line.
	o := homeOptions(t)
	file := filepath.Join(o.Home(), "settings.json")
	mine := `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}`
	require.NoError(t, os.WriteFile(file, []byte(mine), 0o600))
	lines := func() []Edit {
		rec, _, err := readRecord(o)
		require.NoError(t, err)
		return slices.DeleteFunc(rec, func(e Edit) bool { return !slices.Equal(e.Path, []string{"hooks", "SessionStart"}) })
	}
	p := declarePlan(t, o, hookEntries(file, o))
	require.Equal(t, []Edit{{File: recordKey(file), Path: []string{"hooks", "SessionStart"}, Added: "/bin/tasksessiond hook claude-code"}}, lines())
	assert.Contains(t, strings.Join(p.Steps, "\n"), "add the SessionStart hook")

	o.Session = "team"
	p = declarePlan(t, o, hookEntries(file, o))
	assert.Contains(t, strings.Join(p.Steps, "\n"), "replace the stale SessionStart hook")
	var groups []Group
	d, err := config.ParseJSON(readFile(t, file), config.JSON)
	require.NoError(t, err)
	d.Get([]string{"hooks", "SessionStart"}, &groups)
	require.Len(t, groups, 2)
	assert.Equal(t, "/bin/tasksessiond hook claude-code --session team", groups[1].Hooks[0].Command, "replaced where it was")
	require.Equal(t, []Edit{{File: recordKey(file), Path: []string{"hooks", "SessionStart"}, Added: groups[1].Hooks[0].Command}}, lines())

	o.Uninstall = true
	declarePlan(t, o, hookEntries(file, o))
	assert.Equal(t, mine, string(readFile(t, file)))
	assert.NoFileExists(t, o.RecordFile())
}

func TestSetupLeavesTheUsersOwnHookGroupLikeSetups(t *testing.T) {
	// Ensures a group the user wrote by hand that runs the hook as
	// setup's would (HOSTS.md's by-hand instructions) is theirs: setup
	// finds the hook set up and changes nothing of it, and --no-hook and
	// uninstall leave it, bytes and all, where they took it out as setup's.
	for _, flags := range []Options{{NoHook: true}, {Uninstall: true}} {
		o := homeOptions(t)
		file := filepath.Join(o.Home(), "settings.json")
		mine := "{\n  \"hooks\": {\n    \"SessionStart\": [\n      { \"hooks\": [ { \"command\": \"/bin/tasksessiond hook claude-code\", \"type\": \"command\" } ] }\n    ]\n  }\n}\n"
		require.NoError(t, os.WriteFile(file, []byte(mine), 0o600))
		p := declarePlan(t, o, hookEntries(file, o))
		assert.NotContains(t, strings.Join(p.Steps, "\n"), "hook", "set up already")
		assert.Contains(t, string(readFile(t, file)), `"TodoWrite"`)

		o.NoHook, o.Uninstall = flags.NoHook, flags.Uninstall
		declarePlan(t, o, hookEntries(file, o))
		b := readFile(t, file)
		if o.NoHook {
			b = []byte(strings.Replace(string(b), ",\n  \"deny\": [\n    \"TodoWrite\"\n  ]", "", 1))
		}
		assert.Equal(t, mine, string(b), "no-hook %v", o.NoHook)
	}
}

func TestSetupRefusesTheUsersHookGroupRunOtherwise(t *testing.T) {
	// Ensures a group of the user's that runs the hook otherwise than
	// setup would (another --session) is refused by name, the file
	// untouched, where setup took it for a stale one of its own and
	// replaced it.
	o := homeOptions(t)
	file := filepath.Join(o.Home(), "settings.json")
	mine := `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "/bin/tasksessiond hook claude-code --session mine"}]}]}}`
	require.NoError(t, os.WriteFile(file, []byte(mine), 0o600))
	p, err := NewPlan(claudeCode{}, o)
	require.NoError(t, err)
	err = p.Declare(hookEntries(file, o))
	require.ErrorContains(t, err, "hooks.SessionStart[0]")
	assert.ErrorContains(t, err, "--no-hook")
	assert.False(t, p.Changed())
	assert.Equal(t, mine, string(readFile(t, file)))
}

// declarePlan plans and applies the entries with o for a host named
// claude-code.
func declarePlan(t *testing.T, o Options, es []Entry) *Plan {
	t.Helper()
	p, err := NewPlan(claudeCode{}, o)
	require.NoError(t, err)
	require.NoError(t, p.Declare(es))
	require.NoError(t, p.Apply())
	return p
}

func readFile(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	return b
}
