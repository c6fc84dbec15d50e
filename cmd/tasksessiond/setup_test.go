package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// userFiles are configuration files as a user keeps them, per host: what
// setup must edit without damage, relative to HOME.
var userFiles = map[string]map[string]string{
	"claude-code": {
		// Claude Code reads strict JSON; a BOM and CRLF are the user's.
		".claude/settings.json": "\ufeff{\r\n  \"model\": \"opus\",\r\n  \"permissions\": {\r\n    \"allow\": [\"Bash(git status)\"]\r\n  }\r\n}\r\n",
		".claude.json":          "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"other\": {\"type\": \"stdio\", \"command\": \"other-server\", \"args\": []}\n  }\n}\n",
	},
	"codex": {
		".codex/config.toml": "# my Codex\nmodel = \"o3\" # the best one\n\n[mcp_servers.other]\ncommand = \"other-server\"\nargs = [] # none\n",
	},
	"gemini": {
		// comments but no trailing commas: Gemini CLI strips comments,
		// then JSON.parse
		".gemini/settings.json": "// Gemini settings\r\n{\r\n  /* the model */\r\n  \"model\": {\"name\": \"gemini-2.5-pro\"}, // pinned\r\n  \"general\": {\"vimMode\": true} // last\r\n}\r\n",
	},
	"opencode": {
		// the file install.sh once broke, with trailing commas
		".config/opencode/opencode.jsonc": "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"tools\": {\n    \"bash\": true // keep the shell\n  },\n  /* the model */\n  \"model\": \"anthropic/claude-sonnet-4-6\",\n}\n",
	},
	"copilot": {
		".copilot/mcp-config.json": "{\n  // mine\n  \"mcpServers\": {\n    \"other\": {\"type\": \"local\", \"command\": \"other-server\", \"args\": [], \"tools\": [\"*\"]}\n  }\n}\n",
	},
	"qwen": {
		".qwen/settings.json": "// Qwen settings\n{\n  \"model\": {\"name\": \"qwen3-coder-plus\"}, // pinned\n  \"general\": {\"vimMode\": true}\n}\n",
	},
}

// broken are files each host cannot read, which setup must refuse.
var broken = map[string][2]string{
	"claude-code": {".claude/settings.json", "{\n  \"model\": \"opus\", // a comment Claude Code does not read\n}\n"},
	"codex":       {".codex/config.toml", "model = \n"},
	"gemini":      {".gemini/settings.json", "{\"model\": {\"name\": \"x\"},}\n"},
	"opencode":    {".config/opencode/opencode.json", "{\n  \"tools\": {\n    \"bash\": true,, // keep the shell\n  }\n}\n"},
	"copilot":     {".copilot/mcp-config.json", "{\"mcpServers\": {,}}\n"},
	"qwen":        {".qwen/settings.json", "{\"model\": {\"name\": \"x\"},,}\n"},
}

type setupEnv struct {
	home, bin, socket string
}

func newSetupEnv(t *testing.T) setupEnv {
	t.Helper()
	home := t.TempDir()
	bin := filepath.Join(home, "bin", "tasksessiond")
	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	return setupEnv{home: home, bin: bin, socket: filepath.Join(home, "s.sock")}
}

// bareEnv is kv and, of the test's own environment, only GORACE (TestMain
// spares each -race child its second of sleep at exit).
func bareEnv(kv ...string) []string {
	return append(kv, "GORACE="+os.Getenv("GORACE"))
}

// run runs tasksessiond with HOME and nothing else of the user's
// configuration in the environment.
func (e setupEnv) run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	// Gemini CLI trusts the folder the test runs in (doctor_test.go holds
	// what doctor says of one it does not)
	cmd.Env = bareEnv("HOME="+e.home, "PATH="+filepath.Dir(e.bin)+":/usr/bin:/bin", "TASKSESSIOND_SOCKET="+e.socket, "GEMINI_CLI_TRUST_WORKSPACE=true")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if x, ok := err.(*exec.ExitError); ok {
		code = x.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return out.String(), errb.String(), code
}

func (e setupEnv) write(t *testing.T, files map[string]string) {
	t.Helper()
	for rel, text := range files {
		p := filepath.Join(e.home, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	}
}

// record is setup's record under HOME.
func (e setupEnv) record() string {
	return filepath.Join(e.home, ".local", "state", "tasksessiond", "setup.json")
}

// backups are the backups setup left under HOME.
func (e setupEnv) backups(t *testing.T) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(e.home, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		if strings.HasSuffix(p, ".tasksessiond-backup") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// snapshot returns every file under HOME but the backups, the bin and
// setup's record.
func (e setupEnv) snapshot(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	filepath.WalkDir(e.home, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		// setup's own record is tasksessiond's state, not a host's file
		if d.IsDir() || strings.HasSuffix(p, ".tasksessiond-backup") || strings.HasPrefix(p, filepath.Join(e.home, "bin")) || p == e.record() {
			return nil
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		rel, _ := filepath.Rel(e.home, p)
		files[rel] = string(b)
		return nil
	})
	return files
}

func TestSetupEachHost(t *testing.T) {
	// Ensures setup, on each host's files as a user keeps them, changes
	// them, keeps what was there, changes nothing the second time,
	// satisfies doctor, and that --uninstall gives back the original bytes
	// (and removes the files it made); --dry-run changes nothing.
	for name, files := range userFiles {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newSetupEnv(t)
			e.write(t, files)
			orig := e.snapshot(t)

			out, stderr, code := e.run(t, "setup", name, "--dry-run", "--bin", e.bin)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, out, "+++ ")
			dry := out
			assert.Equal(t, orig, e.snapshot(t), "--dry-run changed a file")
			assert.NoFileExists(t, e.record(), "--dry-run wrote setup's record")
			assert.Empty(t, e.backups(t), "--dry-run kept a backup")

			_, stderr, code = e.run(t, "doctor", "--bin", e.bin, name)
			assert.Equal(t, 1, code, "doctor before setup: %s", stderr)
			assert.NoFileExists(t, e.record(), "doctor wrote setup's record")

			out, stderr, code = e.run(t, "setup", name, "--bin", e.bin)
			require.Equal(t, 0, code, "%s%s", out, stderr)
			assert.Contains(t, out, "set up")
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "  - ") { // a step: --dry-run said it first
					assert.Contains(t, dry[:strings.Index(dry, "+++ ")], line, "--dry-run did not list the step")
				}
			}
			assert.Contains(t, out, "note: ", "setup says what it did about the host's own to-do tool")
			set := e.snapshot(t)
			assert.NotEqual(t, orig, set)
			for rel, text := range orig {
				assert.True(t, subsequence(text, set[rel]), "%s: a byte of the user's file is gone:\n%s", rel, set[rel])
			}

			out, stderr, code = e.run(t, "setup", name, "--bin", e.bin)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, out, "set up already")
			assert.Equal(t, set, e.snapshot(t), "a second setup changed a file")

			out, stderr, code = e.run(t, "doctor", "--bin", e.bin, name)
			assert.Equal(t, 0, code, "doctor after setup:\n%s%s", out, stderr)

			out, stderr, code = e.run(t, "setup", name, "--uninstall", "--bin", e.bin)
			require.Equal(t, 0, code, "%s%s", out, stderr)
			assert.Equal(t, orig, e.snapshot(t), "--uninstall did not give back the original files")
		})
	}
}

// usersOwn are files whose user had already set what setup sets, or set
// it otherwise, or kept an empty object or array where setup adds: setup's
// record (Record) keeps --uninstall to exactly what setup changed.
var usersOwn = map[string]map[string]string{
	"claude-code":    {".claude/settings.json": "{\n  \"permissions\": {\n    \"deny\": [\"TodoWrite\", \"WebFetch\"],\n    \"allow\": []\n  }\n}\n"},
	"gemini":         {".gemini/settings.json": "{\n  \"useWriteTodos\": true // I like it\n}\n"},
	"opencode":       {".config/opencode/opencode.json": "{\n  \"tools\": {\"todowrite\": true}\n}\n"},
	"opencode-empty": {".config/opencode/opencode.json": "{\n  \"tools\": {}\n}\n"},
	"claude-code-empty": {
		".claude.json":          "{\n  \"mcpServers\": {}\n}\n",
		".claude/settings.json": "{\n  \"hooks\": {},\n  \"permissions\": {}\n}\n",
	},
	"gemini-empty": {".gemini/settings.json": "{\n  \"mcpServers\": {},\n  \"hooks\": {\"SessionStart\": []}\n}\n"},
	"codex-empty":  {".codex/hooks.json": "{\n  \"hooks\": {}\n}\n"},
}

func TestSetupUninstallKeepsTheUsersOwnValues(t *testing.T) {
	// Ensures --uninstall leaves a value the user had set like setup's,
	// and puts back one setup changed; and that with no record it takes
	// out what is setup's by what it runs and leaves, saying so, the
	// values it cannot tell from the user's (issue 51: no old record
	// format to honour, and nothing of the user's is taken).
	for key, files := range usersOwn {
		name, _, _ := strings.Cut(key, "-empty")
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			e := newSetupEnv(t)
			e.write(t, files)
			orig := e.snapshot(t)
			for _, args := range [][]string{{"setup", name}, {"setup", name}, {"setup", name, "--uninstall"}} {
				out, stderr, code := e.run(t, append(args, "--bin", e.bin)...)
				require.Equal(t, 0, code, "%s%s", out, stderr)
			}
			assert.Equal(t, orig, e.snapshot(t), "--uninstall did not give back the user's own values")
			assert.NoFileExists(t, e.record(), "the record outlives what it records")
			assert.Empty(t, e.backups(t), "backups outlive a setup taken back")

			_, stderr, code := e.run(t, "setup", name, "--bin", e.bin)
			require.Equal(t, 0, code, stderr)
			require.NoError(t, os.Remove(e.record()))
			set := e.snapshot(t)
			out, stderr, code := e.run(t, "setup", name, "--uninstall", "--bin", e.bin)
			require.Equal(t, 0, code, "%s%s", out, stderr)
			assert.NotEqual(t, set, e.snapshot(t), "with no record, uninstall removed nothing")
			if name != "codex" { // Codex's are all setup's by what they run
				assert.Contains(t, out, "says nothing of that file, so it is left as yours", "uninstall does not say what it left with no record")
			}
			for rel, text := range e.snapshot(t) {
				assert.NotContains(t, text, "tasksessiond", rel)
			}
		})
	}
}

func TestSetupRecordEdges(t *testing.T) {
	// Ensures setup's record is never read as empty when it cannot be
	// read (uninstall would take the user's own values), that uninstall
	// makes no file the user deleted and leaves a value the user changed
	// after setup, and that HOME reached through a link finds the record.
	t.Parallel()
	gemini := map[string]string{".gemini/settings.json": "{\n  \"useWriteTodos\": true\n}\n"}
	setup := func(t *testing.T, e setupEnv, extra ...string) (string, int) {
		t.Helper()
		return setupHost(t, e, "gemini", extra...)
	}
	t.Run("Unreadable", func(t *testing.T) {
		t.Parallel()
		for _, rec := range []string{"{", `{"x": 1}`} {
			e := newSetupEnv(t)
			e.write(t, gemini)
			e.write(t, map[string]string{".local/state/tasksessiond/setup.json": rec})
			orig := e.snapshot(t)
			for _, extra := range [][]string{nil, {"--uninstall"}} {
				out, code := setup(t, e, extra...)
				assert.Equal(t, 1, code, "%q %v: %s", rec, extra, out)
				assert.Contains(t, out, "move it aside")
				assert.Equal(t, orig, e.snapshot(t), "%q %v changed a file", rec, extra)
			}
		}
	})
	t.Run("Null", func(t *testing.T) {
		t.Parallel()
		e := newSetupEnv(t)
		e.write(t, gemini)
		e.write(t, map[string]string{".local/state/tasksessiond/setup.json": "null"})
		out, code := setup(t, e)
		require.Equal(t, 0, code, out)
		out, code = setup(t, e, "--uninstall")
		require.Equal(t, 0, code, out)
		assert.Equal(t, gemini[".gemini/settings.json"], e.snapshot(t)[".gemini/settings.json"])
	})
	t.Run("FileDeleted", func(t *testing.T) {
		t.Parallel()
		e := newSetupEnv(t)
		e.write(t, gemini)
		_, code := setup(t, e)
		require.Equal(t, 0, code)
		require.NoError(t, os.Remove(filepath.Join(e.home, ".gemini/settings.json")))
		out, code := setup(t, e, "--uninstall")
		require.Equal(t, 0, code, out)
		assert.NoFileExists(t, filepath.Join(e.home, ".gemini/settings.json"))
	})
	t.Run("RecordLost", func(t *testing.T) {
		t.Parallel()
		// With its record lost, a setup then uninstall takes out what is
		// setup's by what it is (the server, the hooks, the plugin) and
		// leaves the values it cannot tell from the user's (issue 51:
		// before, a file holding setup's server took them as setup's).
		for name, files := range userFiles {
			if name == "codex" { // a block of setup's own: nothing recorded
				continue
			}
			e := newSetupEnv(t)
			e.write(t, files)
			orig := e.snapshot(t)
			_, code := setupHost(t, e, name)
			require.Equal(t, 0, code)
			require.NoError(t, os.Remove(e.record()))
			out, code := setupHost(t, e, name, "--uninstall")
			require.Equal(t, 0, code, out)
			if name == "copilot" || name == "qwen" {
				// setup changes no value of the user's there: all it
				// added is its own, and goes
				assert.Equal(t, orig, e.snapshot(t), "%s: uninstall with no record did not give back the user's files", name)
				continue
			}
			assert.Contains(t, out, "left as yours", name)
			assert.NotEqual(t, orig, e.snapshot(t), "%s: values setup cannot tell from the user's were taken", name)
			for rel, text := range e.snapshot(t) {
				assert.NotContains(t, text, "tasksessiond", "%s: %s", name, rel)
			}
		}
	})
	t.Run("EmptyFile", func(t *testing.T) {
		t.Parallel()
		// A file the user keeps empty stays, as it was.
		for _, text := range []string{"{}", "", "\ufeff{ }\r\n"} {
			for name, rel := range map[string]string{"gemini": ".gemini/settings.json", "claude-code": ".claude/settings.json", "opencode": ".config/opencode/opencode.json"} {
				e := newSetupEnv(t)
				e.write(t, map[string]string{rel: text})
				_, code := setupHost(t, e, name)
				require.Equal(t, 0, code)
				out, code := setupHost(t, e, name, "--uninstall")
				require.Equal(t, 0, code, out)
				assert.Equal(t, text, e.snapshot(t)[rel], "%s %q", name, text)
				assert.FileExists(t, filepath.Join(e.home, rel), "%s %q", name, text)
			}
		}
	})
	t.Run("DeletedAndSetUpAgain", func(t *testing.T) {
		t.Parallel()
		// What the record said of a file the user deleted is not
		// what setup finds when it makes it again.
		e := newSetupEnv(t)
		rel := ".claude/settings.json"
		e.write(t, map[string]string{rel: `{"permissions": {"deny": []}}`})
		_, code := setupHost(t, e, "claude-code")
		require.Equal(t, 0, code)
		require.NoError(t, os.Remove(filepath.Join(e.home, rel)))
		_, code = setupHost(t, e, "claude-code")
		require.Equal(t, 0, code)
		out, code := setupHost(t, e, "claude-code", "--uninstall")
		require.Equal(t, 0, code, out)
		assert.NoFileExists(t, filepath.Join(e.home, rel), "uninstall left a file setup made")
	})
	t.Run("ChangedAfterSetup", func(t *testing.T) {
		t.Parallel()
		// A value the user set after setup stays; set again by a second
		// setup, uninstall puts it back as the user set it.
		for _, again := range []bool{false, true} {
			e := newSetupEnv(t)
			_, code := setup(t, e)
			require.Equal(t, 0, code)
			p := filepath.Join(e.home, ".gemini/settings.json")
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			mine := strings.Replace(string(b), `"useWriteTodos": false`, `"useWriteTodos": true`, 1)
			require.NotEqual(t, string(b), mine)
			require.NoError(t, os.WriteFile(p, []byte(mine), 0o600))
			if again {
				_, code = setup(t, e)
				require.Equal(t, 0, code)
			}
			out, code := setup(t, e, "--uninstall")
			require.Equal(t, 0, code, out)
			b, err = os.ReadFile(p)
			require.NoError(t, err)
			assert.Contains(t, string(b), `"useWriteTodos": true`, "set up again: %v", again)
		}
	})
	t.Run("PutBackAsWritten", func(t *testing.T) {
		t.Parallel()
		e := newSetupEnv(t)
		mine := map[string]string{".gemini/settings.json": "{\n  \"useWriteTodos\": 1.0,\n  \"x\": \"\\u0074\"\n}\n"}
		e.write(t, mine)
		_, code := setup(t, e)
		require.Equal(t, 0, code)
		out, code := setup(t, e, "--uninstall")
		require.Equal(t, 0, code, out)
		assert.Equal(t, mine, e.snapshot(t))
	})
	t.Run("NoBackupOfTheRecord", func(t *testing.T) {
		t.Parallel()
		e := newSetupEnv(t)
		e.write(t, gemini)
		for range 2 {
			_, code := setupHost(t, e, "opencode") // the record, rewritten
			require.Equal(t, 0, code)
			_, code = setup(t, e)
			require.Equal(t, 0, code)
		}
		require.FileExists(t, e.record())
		assert.NoFileExists(t, e.record()+".tasksessiond-backup")
	})
	t.Run("DoctorNamesTheRecord", func(t *testing.T) {
		t.Parallel()
		e := newSetupEnv(t)
		e.write(t, gemini)
		e.write(t, map[string]string{".local/state/tasksessiond/setup.json": "{"})
		out, _, code := e.run(t, "doctor", "--bin", e.bin, "gemini")
		assert.Equal(t, 1, code, out)
		assert.Contains(t, out, e.record())
		assert.Contains(t, out, "fix: mv "+e.record())
		assert.NotContains(t, out, filepath.Join(e.home, ".gemini/settings.json"), "doctor blames the host's file")
	})
	t.Run("NoRecordNoSetup", func(t *testing.T) {
		t.Parallel()
		// With no record and nothing of setup's in a file, what setup
		// would set is the user's: uninstall (again, or of a host never
		// set up) leaves it.
		for name, files := range map[string]map[string]string{
			"gemini":      {".gemini/settings.json": "{\n  \"useWriteTodos\": false\n}\n"},
			"claude-code": {".claude/settings.json": `{"permissions":{"deny":["TodoWrite"]}}`},
			"opencode":    {".config/opencode/opencode.json": `{"tools":{"todowrite":false},"model":"x"}`},
		} {
			e := newSetupEnv(t)
			e.write(t, files)
			orig := e.snapshot(t)
			for _, extra := range [][]string{{"--uninstall"}, nil, {"--uninstall"}, {"--uninstall"}} {
				out, code := setupHost(t, e, name, extra...)
				require.Equal(t, 0, code, out)
			}
			assert.Equal(t, orig, e.snapshot(t), name)
		}
	})
	t.Run("ServerByHandNoHook", func(t *testing.T) {
		t.Parallel()
		// Values of the user's in a file that holds nothing of setup's
		// stay theirs, though the host's server was set up by hand.
		e := newSetupEnv(t)
		rel := ".claude/settings.json"
		e.write(t, map[string]string{
			".claude.json": `{"mcpServers":{"tasks":{"type":"stdio","command":"tasksessiond","args":["mcp"]}}}`,
			rel:            `{"permissions":{"allow":["mcp__tasks"],"deny":["TodoWrite"]}}`,
		})
		orig := e.snapshot(t)[rel]
		setUpAndTakeBack(t, e, "claude-code")
		assert.Equal(t, orig, e.snapshot(t)[rel])
	})
	t.Run("OpenCodeMovedToJSONC", func(t *testing.T) {
		t.Parallel()
		// The user moves to opencode.jsonc after setup: uninstall takes
		// back setup's opencode.json and leaves the user's own value in
		// the new file.
		e := newSetupEnv(t)
		_, code := setupHost(t, e, "opencode")
		require.Equal(t, 0, code)
		mine := map[string]string{".config/opencode/opencode.jsonc": "{\n  // mine\n  \"model\": \"x\",\n  \"tools\": {\"todowrite\": false},\n}\n"}
		e.write(t, mine)
		setUpAndTakeBack(t, e, "opencode")
		assert.Equal(t, mine, e.snapshot(t))
	})
	t.Run("CodexEmptyFile", func(t *testing.T) {
		t.Parallel()
		e := newSetupEnv(t)
		mine := map[string]string{".codex/config.toml": ""}
		e.write(t, mine)
		setUpAndTakeBack(t, e, "codex")
		assert.Equal(t, mine, e.snapshot(t))
	})
	t.Run("AnotherBin", func(t *testing.T) {
		t.Parallel()
		// Set up with a --bin not named tasksessiond, taken back without
		// it: setup's server and hook are left, said so, and the record
		// kept, so that uninstall with that --bin takes back only setup's.
		e := newSetupEnv(t)
		rel := ".claude/settings.json"
		e.write(t, map[string]string{rel: `{"permissions":{"deny":["TodoWrite"]}}`})
		orig := e.snapshot(t)
		tsd := filepath.Join(e.home, "bin", "tsd")
		require.NoError(t, os.WriteFile(tsd, []byte("#!/bin/sh\n"), 0o755))
		out, code := setupHost(t, e, "claude-code", "--bin", tsd)
		require.Equal(t, 0, code, out)
		out, code = setupHost(t, e, "claude-code", "--uninstall")
		require.Equal(t, 0, code, out)
		assert.Contains(t, out, "run uninstall with the --bin setup was given")
		out, code = setupHost(t, e, "claude-code", "--uninstall", "--bin", tsd)
		require.Equal(t, 0, code, out)
		assert.Equal(t, orig, e.snapshot(t))
	})
	t.Run("NoHookAfterAHook", func(t *testing.T) {
		t.Parallel()
		// --no-hook after a setup with the hook takes the hook out, on
		// every host.
		for name, rel := range map[string]string{"claude-code": ".claude/settings.json", "gemini": ".gemini/settings.json", "codex": ".codex/hooks.json",
			"copilot": ".copilot/hooks/tasksessiond.json", "qwen": ".qwen/settings.json"} {
			e := newSetupEnv(t)
			out, code := setupHost(t, e, name)
			require.Equal(t, 0, code, out)
			require.Contains(t, e.snapshot(t)[rel], "hook "+name)
			out, code = setupHost(t, e, name, "--no-hook")
			require.Equal(t, 0, code, out)
			assert.NotContains(t, e.snapshot(t)[rel], "hook "+name, name)
		}
	})
	t.Run("CodexFileEmptiedByTheUser", func(t *testing.T) {
		t.Parallel()
		// A config.toml of the user's that the user emptied after setup
		// stays, as the user left it.
		e := newSetupEnv(t)
		e.write(t, map[string]string{".codex/config.toml": "model = \"o3\"\n"})
		out, code := setupHost(t, e, "codex")
		require.Equal(t, 0, code, out)
		p := filepath.Join(e.home, ".codex/config.toml")
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, []byte(strings.TrimPrefix(string(b), "model = \"o3\"\n\n")), 0o600))
		out, code = setupHost(t, e, "codex", "--uninstall")
		require.Equal(t, 0, code, out)
		assert.FileExists(t, p)
	})
	t.Run("DoctorFlagsAfterTheHost", func(t *testing.T) {
		t.Parallel()
		e := newSetupEnv(t)
		out, stderr, _ := e.run(t, "doctor", "gemini", "--bin", e.bin)
		assert.NotContains(t, stderr, "unknown host", out)
		assert.Contains(t, out, "Gemini CLI")
	})
	t.Run("AnotherStateHome", func(t *testing.T) {
		// Set up from a shell with XDG_STATE_HOME, taken back from one
		// without: the record is found all the same.
		t.Parallel()
		e := newSetupEnv(t)
		e.write(t, gemini)
		orig := e.snapshot(t)
		cmd := exec.Command(binary, "setup", "gemini", "--bin", e.bin)
		cmd.Env = bareEnv("HOME="+e.home, "PATH="+filepath.Dir(e.bin)+":/usr/bin:/bin", "XDG_STATE_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		msg, code := setup(t, e, "--uninstall")
		require.Equal(t, 0, code, msg)
		assert.Equal(t, orig, e.snapshot(t))
	})
	t.Run("HomeThroughALink", func(t *testing.T) {
		t.Parallel()
		e := newSetupEnv(t)
		e.write(t, gemini)
		orig := e.snapshot(t)
		link := filepath.Join(t.TempDir(), "home")
		require.NoError(t, os.Symlink(e.home, link))
		linked := e
		linked.home = link
		_, code := setup(t, linked)
		require.Equal(t, 0, code)
		out, code := setup(t, e, "--uninstall")
		require.Equal(t, 0, code, out)
		assert.Equal(t, orig, e.snapshot(t))
	})
}

// setupHost runs setup for host name with e's bin, returning all it wrote.
func setupHost(t *testing.T, e setupEnv, name string, extra ...string) (string, int) {
	t.Helper()
	out, stderr, code := e.run(t, append([]string{"setup", name, "--bin", e.bin}, extra...)...)
	return out + stderr, code
}

// setUpAndTakeBack sets host name up and takes it back, each succeeding.
func setUpAndTakeBack(t *testing.T, e setupEnv, name string) {
	t.Helper()
	for _, extra := range [][]string{nil, {"--uninstall"}} {
		out, code := setupHost(t, e, name, extra...)
		require.Equal(t, 0, code, out)
	}
}

func TestSetupRefusesWhatTheHostCannotRead(t *testing.T) {
	// Ensures a file the host would not read is refused, with its path
	// and the reason, and left byte for byte as it was.
	for name, f := range broken {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newSetupEnv(t)
			e.write(t, map[string]string{f[0]: f[1]})
			orig := e.snapshot(t)
			_, stderr, code := e.run(t, "setup", name, "--bin", e.bin)
			assert.Equal(t, 1, code)
			assert.Contains(t, stderr, filepath.Join(e.home, f[0]))
			assert.Contains(t, stderr, "nothing was changed")
			assert.Equal(t, orig, e.snapshot(t))
		})
	}
}

func TestSetupReplacesAStaleSetup(t *testing.T) {
	// Ensures doctor reports a setup that runs an old binary's path, with
	// the command that fixes it, and that setup replaces it rather than
	// adding a second server or hook.
	t.Parallel()
	e := newSetupEnv(t)
	_, stderr, code := e.run(t, "setup", "gemini", "--bin", "/old/tasksessiond")
	require.Equal(t, 0, code, stderr)
	out, _, code := e.run(t, "doctor", "--bin", e.bin, "gemini")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "replace the MCP server")
	assert.Contains(t, out, "fix: tasksessiond setup gemini --bin "+e.bin)
	_, stderr, code = e.run(t, "setup", "gemini", "--bin", e.bin)
	require.Equal(t, 0, code, stderr)
	b, err := os.ReadFile(filepath.Join(e.home, ".gemini", "settings.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "/old/")
	assert.Equal(t, 2, strings.Count(string(b), e.bin+" hook gemini"), "one hook per event:\n%s", b)
}

// subsequence reports whether every byte of a is in b, in order.
func subsequence(a, b string) bool {
	i := 0
	for j := 0; j < len(b) && i < len(a); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a)
}

func TestDoctorFindsStaleSetups(t *testing.T) {
	// Ensures doctor reports a Claude Code hook whose matcher leaves out
	// "clear" and a second server running tasksessiond mcp under another
	// name, each with the command that fixes it, and exits 1; setup then
	// replaces the hook rather than adding a second.
	t.Parallel()
	e := newSetupEnv(t)
	e.write(t, map[string]string{
		".claude/settings.json": `{"permissions": {"allow": ["mcp__tasks"]}, "hooks": {"SessionStart": [{"matcher": "startup|resume|compact", "hooks": [{"type": "command", "command": "tasksessiond hook claude-code"}]}]}}`,
		".claude.json":          `{"mcpServers": {"todo": {"type": "stdio", "command": "tasksessiond", "args": ["mcp"]}}}`,
	})
	out, _, code := e.run(t, "doctor", "--bin", e.bin, "claude-code")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "replace the stale SessionStart hook")
	assert.Contains(t, out, "the MCP server todo")
	assert.Contains(t, out, "fix: claude mcp remove todo")
	assert.Contains(t, out, "fix: tasksessiond setup claude-code --bin "+e.bin)
	_, stderr, code := e.run(t, "setup", "claude-code", "--bin", e.bin)
	require.Equal(t, 0, code, stderr)
	b, err := os.ReadFile(filepath.Join(e.home, ".claude", "settings.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "matcher")
	assert.Equal(t, 1, strings.Count(string(b), "hook claude-code"), "%s", b)
}

func TestSetupHonoursConfigDirs(t *testing.T) {
	// Ensures setup writes where each host reads its configuration when
	// its own variable moves it, and a project's files with --project.
	t.Parallel()
	for _, c := range []struct {
		host, env, file string
	}{
		{"claude-code", "CLAUDE_CONFIG_DIR", "settings.json"},
		{"claude-code", "CLAUDE_CONFIG_DIR", ".claude.json"},
		{"codex", "CODEX_HOME", "config.toml"},
		{"codex", "CODEX_HOME", "hooks.json"},
		{"gemini", "GEMINI_CLI_HOME", ".gemini/settings.json"},
		{"opencode", "OPENCODE_CONFIG_DIR", "opencode.json"},
		{"opencode", "OPENCODE_CONFIG_DIR", "plugin/tasksessiond.ts"},
		{"opencode", "XDG_CONFIG_HOME", "opencode/opencode.json"},
		{"qwen", "QWEN_HOME", "settings.json"},
	} {
		e := newSetupEnv(t)
		dir := t.TempDir()
		cmd := exec.Command(binary, "setup", c.host, "--bin", e.bin)
		cmd.Env = bareEnv("HOME="+e.home, "PATH=/usr/bin:/bin", c.env+"="+dir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.FileExists(t, filepath.Join(dir, c.file), "%s with %s", c.host, c.env)
	}
	for host, files := range map[string][]string{
		"claude-code": {".mcp.json", ".claude/settings.json"},
		"gemini":      {".gemini/settings.json"},
		"opencode":    {"opencode.json", ".opencode/plugin/tasksessiond.ts"},
	} {
		e := newSetupEnv(t)
		project := t.TempDir()
		cmd := exec.Command(binary, "setup", host, "--project", "--bin", e.bin)
		cmd.Dir, cmd.Env = project, bareEnv("HOME="+e.home, "PATH=/usr/bin:/bin")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		for _, f := range files {
			assert.FileExists(t, filepath.Join(project, f), "%s --project", host)
		}
		assert.Equal(t, map[string]string{}, e.snapshot(t), "%s --project wrote a host's file in HOME", host)
	}
	// Codex reads a project hook's trust from the user's config.toml
	// only: that, and nothing else, is written in HOME.
	e := newSetupEnv(t)
	project := t.TempDir()
	cmd := exec.Command(binary, "setup", "codex", "--project", "--bin", e.bin)
	cmd.Dir, cmd.Env = project, bareEnv("HOME="+e.home, "PATH=/usr/bin:/bin")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "until you trust the project")
	for _, f := range []string{".codex/config.toml", ".codex/hooks.json"} {
		assert.FileExists(t, filepath.Join(project, f), "codex --project")
	}
	home := e.snapshot(t)
	assert.Len(t, home, 1, "codex --project wrote in HOME: %v", home)
	assert.Contains(t, home[".codex/config.toml"], "[hooks.state.")
}

func TestSetupLeavesAServerOfTheUsers(t *testing.T) {
	// Ensures a server of the user's under setup's name is refused, not
	// replaced, and the file left as it was.
	t.Parallel()
	e := newSetupEnv(t)
	e.write(t, map[string]string{".gemini/settings.json": `{"mcpServers": {"tasks": {"command": "my-own-tasks"}}}`})
	orig := e.snapshot(t)
	_, stderr, code := e.run(t, "setup", "gemini", "--bin", e.bin)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "mcpServers.tasks is a server of yours (it runs my-own-tasks)")
	assert.Equal(t, orig, e.snapshot(t))
}

func TestSetupRefusesAGroupOfTheUsersThatRunsTheHook(t *testing.T) {
	// Ensures a hook group of the user's (with a hook of their own in it)
	// that already runs the hook is refused by name, every file left as
	// it was: setup's own group beside it would run the hook twice. With
	// --no-hook, setup goes on; uninstall then gives the bytes back.
	t.Parallel()
	e := newSetupEnv(t)
	e.write(t, map[string]string{".claude/settings.json": `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "` + e.bin + ` hook claude-code"}, {"type": "command", "command": "my-hook"}]}]}}`})
	orig := e.snapshot(t)
	_, stderr, code := e.run(t, "setup", "claude-code", "--bin", e.bin)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "hooks.SessionStart[0] is a group of your hooks that runs")
	assert.Equal(t, orig, e.snapshot(t))
	out, code := setupHost(t, e, "claude-code", "--no-hook")
	require.Equal(t, 0, code, out)
	out, code = setupHost(t, e, "claude-code", "--uninstall")
	require.Equal(t, 0, code, out)
	assert.Equal(t, orig, e.snapshot(t))
}
