package gemini

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/host"
)

func TestDiagnoseReadsTheSystemDefaults(t *testing.T) {
	// Ensures doctor reads Gemini CLI's system defaults file
	// (GEMINI_CLI_SYSTEM_DEFAULTS_PATH, else system-defaults.json beside
	// the system settings) as Gemini CLI 0.61.0 does: mcp.excluded there
	// blocks the server ("gemini mcp list": Blocked) where doctor once
	// said "set up"; and that a system file others may write is skipped,
	// as Gemini CLI skips it.
	home, sys := t.TempDir(), t.TempDir()
	defaults := filepath.Join(sys, "system-defaults.json")
	if err := os.WriteFile(defaults, []byte(`{"mcp": {"excluded": ["tasks"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_CLI_SYSTEM_SETTINGS_PATH": filepath.Join(sys, "settings.json")}
	o := host.Options{Project: home, Getenv: func(k string) string { return env[k] }}
	blocked := func() string {
		var b strings.Builder
		for _, f := range (Host{}).Diagnose(o).Blocked {
			b.WriteString(f.Problem + "\n")
		}
		return b.String()
	}
	was := secure
	t.Cleanup(func() { secure = was })
	secure = func(string) bool { return true }
	if got := blocked(); !strings.Contains(got, "mcp.excluded in "+defaults+" names the server tasks") {
		t.Errorf("beside the system settings: %q", got)
	}
	moved := filepath.Join(t.TempDir(), "d.json")
	if err := os.Rename(defaults, moved); err != nil {
		t.Fatal(err)
	}
	env["GEMINI_CLI_SYSTEM_DEFAULTS_PATH"] = moved
	if got := blocked(); !strings.Contains(got, "mcp.excluded in "+moved+" names the server tasks") {
		t.Errorf("GEMINI_CLI_SYSTEM_DEFAULTS_PATH: %q", got)
	}
	secure = was // under the temporary folder, which all may write
	if got := blocked(); got != "" {
		t.Errorf("a file Gemini CLI skips as insecure: %q", got)
	}
}

func TestDiagnoseQwenProjectServerApproval(t *testing.T) {
	// Ensures doctor says, as "qwen mcp reconnect --all" does (Qwen Code
	// 0.24.4), that a workspace's server "tasks" (setup --project's) is
	// skipped, "pending approval", until "qwen mcp approve tasks" records
	// it for the folder with the hash of its settings (the hash below is
	// the one Qwen Code wrote); that a rejected or changed one is skipped
	// too; that YOLO mode asks no approval; and that a workspace's or a
	// .mcp.json's "tasks" that runs something else overrides setup's.
	// Doctor once said "set up" of each.
	home, project, ws, write, blocked := qwenProject(t)
	approvals := filepath.Join(home, ".qwen", "mcpApprovals.json")
	assert.Contains(t, blocked(), "the MCP server tasks in "+ws+" is not approved for the folder")
	const hash = "6dc5924c1bfa51f36ba62121ec03bc957f58d06439b5a5f3adde08d1738093b5"
	write(approvals, `{"`+project+`": {"tasks": {"hash": "`+hash+`", "status": "approved"}}}`)
	assert.Empty(t, blocked())
	write(approvals, `{"`+project+`": {"tasks": {"hash": "`+hash+`", "status": "rejected"}}}`)
	assert.Contains(t, blocked(), "is rejected for the folder")
	write(approvals, `{"`+project+`": {"tasks": {"hash": "0`+hash[1:]+`", "status": "approved"}}}`)
	assert.Contains(t, blocked(), "is changed since it was approved")
	write(filepath.Join(home, ".qwen", "settings.json"), `{"tools": {"approvalMode": "yolo"}}`)
	assert.Empty(t, blocked())

	write(ws, `{"mcpServers": {"tasks": {"command": "echo"}}}`)
	assert.Contains(t, blocked(), "the MCP server tasks in "+ws+", which does not run tasksessiond mcp, overrides setup's")
	require.NoError(t, os.Remove(ws))
	write(filepath.Join(project, ".mcp.json"), `{"mcpServers": {"tasks": {"command": "echo"}}}`)
	assert.Contains(t, blocked(), "the MCP server tasks in "+filepath.Join(project, ".mcp.json")+", which does not run tasksessiond mcp")
}

func TestDiagnoseQwenMCPJSONApprovalIsBoundToItsHash(t *testing.T) {
	// Ensures doctor holds a .mcp.json's server "tasks" to the hash its
	// approval was bound to, as Qwen Code 0.24.4 does (getState: another
	// hash is "pending"): approved as it is, it is set up; edited since, it
	// is skipped until approved again, where doctor once said "set up"
	// whatever the hash. The hashes below are the ones "qwen mcp approve
	// --all" wrote for these servers.
	home, project := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o600))
	}
	mcpJSON := filepath.Join(project, ".mcp.json")
	const server = `{"type": "stdio", "command": "tasksessiond", "args": ["mcp"], "env": {"Z": "1", "A": "é<>&\u2028\u0001"}, "timeout": 1.50, "description": "x"}`
	write(mcpJSON, `{
  // comment
  "mcpServers": {"tasks": `+server+`}
}`)
	const hash = "e6980269869d55a334ba1dbe8dc43611962b701cc64b6f01509ae1848a6d8825"
	write(filepath.Join(home, ".qwen", "mcpApprovals.json"), `{"`+project+`": {"tasks": {"hash": "`+hash+`", "status": "approved"}}}`)
	o := host.Options{Project: project, Getenv: func(k string) string { return map[string]string{"HOME": home}[k] }}
	dialect := Dialect{Title: "Qwen Code", Name: "qwen", Dir: filepath.Join(home, ".qwen"), System: filepath.Join(home, "none"), Qwen: true}
	find := func() []host.Finding { return dialect.Diagnose(o).Blocked }
	assert.Empty(t, find(), "approved as it is")

	write(mcpJSON, `{"mcpServers": {"tasks": {"command": "tasksessiond", "args": ["mcp", "--db", "/tmp/other.db"]}}}`)
	got := find()
	require.Len(t, got, 1, "edited since")
	assert.Contains(t, got[0].Problem, "the MCP server tasks in "+mcpJSON+" is changed since it was approved")
	assert.Contains(t, got[0].Fix, "qwen mcp approve tasks (in "+project+")")

	write(filepath.Join(home, ".qwen", "mcpApprovals.json"), `{"`+project+`": {"tasks": {"hash": "`+hash+`", "status": "rejected"}}}`)
	got = find()
	require.Len(t, got, 1, "edited since it was rejected")
	assert.Contains(t, got[0].Problem, "is changed since it was rejected")
}

func TestDiagnoseQwenReadsItsApprovalsAsQwenCodeParsesThem(t *testing.T) {
	// Ensures doctor reads mcpApprovals.json and .mcp.json as Qwen Code
	// 0.24.4 does (strip-json-comments, then JSON.parse): an approval in a
	// file with a trailing comma, which Qwen Code cannot parse and so
	// reads as none, leaves the server pending, where doctor once read
	// the file leniently and said "set up"; and a .mcp.json it cannot
	// parse starts no server, so nothing of it is judged.
	home, project, ws, write, blocked := qwenProject(t)
	const hash = "6dc5924c1bfa51f36ba62121ec03bc957f58d06439b5a5f3adde08d1738093b5" // as in TestDiagnoseQwenProjectServerApproval
	approvals := filepath.Join(home, ".qwen", "mcpApprovals.json")
	write(approvals, `{"`+project+`": {"tasks": {"hash": "`+hash+`", "status": "approved"}}} // approved
`)
	assert.Empty(t, blocked(), "comments are read")
	write(approvals, `{"`+project+`": {"tasks": {"hash": "`+hash+`", "status": "approved"},},}`)
	assert.Contains(t, blocked(), "is not approved for the folder", "a trailing comma: Qwen Code reads no approval")

	require.NoError(t, os.Remove(ws))
	write(filepath.Join(project, ".mcp.json"), `{"mcpServers": {"tasks": {"command": "echo"},},}`)
	assert.Empty(t, blocked(), "a .mcp.json Qwen Code cannot parse starts nothing")
}

func TestServerHashIsQwenCodes(t *testing.T) {
	// Ensures serverHash is the hash Qwen Code 0.24.4 writes to
	// mcpApprovals.json ("qwen mcp approve --all"): a .mcp.json's server
	// in Qwen Code's form (no "type"; a "url" of type "http" as
	// "httpUrl"), keys sorted at every depth, numbers and strings as
	// JSON.stringify writes them (1.50 as 1.5; "<", "é" and U+2028 as
	// they are; U+0001 as \u0001; keys that are array indexes first, "9"
	// before "10"), "description" left out.
	for _, c := range []struct {
		name, raw string
		claude    bool
		hash      string
	}{
		{"Stdio", `{"type": "stdio", "command": "tasksessiond", "args": ["mcp"], "env": {"Z": "1", "A": "é<>&\u2028\u0001"}, "timeout": 1.50, "description": "x"}`, true,
			"e6980269869d55a334ba1dbe8dc43611962b701cc64b6f01509ae1848a6d8825"},
		{"HTTP", `{"type": "http", "url": "https://example.com/mcp", "headers": {"b": "1", "a": "2"}}`, true,
			"9c992893aed64e46f3449a23be026c50098baf43ef7b05fbec67004d6539a45d"},
		{"IndexKeys", `{"command": "tasksessiond", "args": ["mcp"], "env": {"b": "1", "10": "2", "9": "3", "01": "4", "4294967295": "5"}}`, true,
			"c59ad1260074f913ec45ef7d4d3ba39f8c38e8dfbcdf61df006475cda9bc5b25"},
		{"Settings", `{"command": "tasksessiond", "args": ["mcp"], "trust": true}`, false,
			"6dc5924c1bfa51f36ba62121ec03bc957f58d06439b5a5f3adde08d1738093b5"},
		// -0 as 0: doctor once wrote "-0" and said an approved server
		// had changed (qwen mcp list: Connected)
		{"NegativeZero", `{"command": "tasksessiond", "args": ["mcp"], "timeout": -0}`, true,
			"3fe4fe52f11e160ea93834ce5c6cba7a224da4417875b259e5d8328c3e6c8d29"},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.hash, serverHash([]byte(c.raw), c.claude))
		})
	}
}

func TestDiagnoseQwenDisableAllHooksLastWord(t *testing.T) {
	// Ensures doctor holds "disableAllHooks" to the word Qwen Code 0.24.4
	// keeps of it, the workspace's over the user's and the system's over
	// both: the user's true under a workspace's false left the hook
	// running (a session ran it), where doctor named the user's true.
	for _, c := range []struct {
		name, user, workspace, system string
		off                           string // the file named, "" none
	}{
		{"UserOff", `{"disableAllHooks": true}`, `{}`, ``, "user"},
		{"WorkspaceTurnsItOn", `{"disableAllHooks": true}`, `{"disableAllHooks": false}`, ``, ""},
		{"WorkspaceOff", `{}`, `{"disableAllHooks": true}`, ``, "workspace"},
		{"SystemOverWorkspace", `{}`, `{"disableAllHooks": false}`, `{"disableAllHooks": true}`, "system"},
		{"SystemTurnsItOn", `{"disableAllHooks": true}`, `{"disableAllHooks": true}`, `{"disableAllHooks": false}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			home, project := t.TempDir(), t.TempDir()
			files := map[string]string{
				"user":      filepath.Join(home, ".qwen", "settings.json"),
				"workspace": filepath.Join(project, ".qwen", "settings.json"),
				"system":    filepath.Join(home, "system.json"),
			}
			for k, s := range map[string]string{"user": c.user, "workspace": c.workspace, "system": c.system} {
				if s != "" {
					require.NoError(t, os.MkdirAll(filepath.Dir(files[k]), 0o755))
					require.NoError(t, os.WriteFile(files[k], []byte(s), 0o600))
				}
			}
			o := host.Options{Project: project, Getenv: func(k string) string { return map[string]string{"HOME": home}[k] }}
			dialect := Dialect{Title: "Qwen Code", Name: "qwen", Dir: filepath.Join(home, ".qwen"), System: files["system"], Qwen: true}
			var off []string
			for _, f := range dialect.Diagnose(o).Blocked {
				if strings.Contains(f.Problem, "disableAllHooks") {
					off = append(off, f.Problem)
				}
			}
			if c.off == "" {
				assert.Empty(t, off)
				return
			}
			require.Len(t, off, 1)
			assert.Contains(t, off[0], `"disableAllHooks": true in `+files[c.off])
		})
	}
}

// qwenProject makes a HOME and a project whose workspace settings (ws)
// hold setup --project's server for Qwen Code, with write, which writes a
// file, and blocked, what doctor finds that keeps Qwen Code from the
// tools there, a line each.
func qwenProject(t *testing.T) (home, project, ws string, write func(p, s string), blocked func() string) {
	home, project = t.TempDir(), t.TempDir()
	write = func(p, s string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o600))
	}
	ws = filepath.Join(project, ".qwen", "settings.json")
	write(ws, `{"mcpServers": {"tasks": {"command": "tasksessiond", "args": ["mcp"], "trust": true}}}`)
	o := host.Options{Project: project, Getenv: func(k string) string { return map[string]string{"HOME": home}[k] }}
	dialect := Dialect{Title: "Qwen Code", Name: "qwen", Dir: filepath.Join(home, ".qwen"), System: filepath.Join(home, "none"), Qwen: true}
	blocked = func() string {
		var b strings.Builder
		for _, f := range dialect.Diagnose(o).Blocked {
			b.WriteString(f.Problem + "\n")
		}
		return b.String()
	}
	return home, project, ws, write, blocked
}
