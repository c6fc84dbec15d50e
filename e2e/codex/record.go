package codex

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
)

// The hook and the MCP server run through small shell wrappers that record
// what Codex gave them (the hook's input, the environment, the rollout as
// it was), what the hook answered, and both programs' stderr; then they run
// tasksessiond. The hook gets --socket and --db: Codex runs hooks in its
// own environment, which does not hold the MCP server's env from
// config.toml, and a hook that starts the daemon must start it on the
// test's database (TestDaemonKilled).

func (h *Host) hookCommand() string { return filepath.Join(h.Root, "bin", "hook.sh") }
func (h *Host) mcpCommand() string  { return filepath.Join(h.Root, "bin", "mcp.sh") }

// shq quotes s for sh.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func shqList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = shq(s)
	}
	return strings.Join(q, " ")
}

func (h *Host) writeWrappers(opts Options) {
	hook := `#!/bin/sh
# Records a SessionStart hook run for the test, then passes its output on.
d=` + shq(h.hookDir) + `/$(date +%s%N)-$$
cat >"$d.in"
tp=$(sed -n 's/.*"transcript_path" *: *"\([^"]*\)".*/\1/p' "$d.in")
if [ -n "$tp" ] && [ -f "$tp" ]; then cp "$tp" "$d.transcript"; fi
env >"$d.fullenv"
` + shq(h.TSD) + ` hook codex --socket ` + shq(h.Daemon.Socket) + ` --db ` + shq(h.Daemon.DB) + ` ` + shqList(opts.HookArgs) + ` <"$d.in" >"$d.out" 2>"$d.err"
printf 'PPID=%s\n' "$PPID" >"$d.env"
cat "$d.out"
`
	mcp := `#!/bin/sh
# Records the MCP server's start for the test, then becomes it.
printf 'pid=%s ppid=%s TASKSESSIOND_SOCKET=%s TASKSESSIOND_DB=%s\n' "$$" "$PPID" "$TASKSESSIOND_SOCKET" "$TASKSESSIOND_DB" >>` + shq(h.mcpLog) + `
env >>` + shq(h.mcpLog+".env") + `
exec ` + shq(h.TSD) + ` mcp "$@" 2>>` + shq(h.mcpErr) + `
`
	for path, text := range map[string]string{h.hookCommand(): hook, h.mcpCommand(): mcp} {
		if err := os.WriteFile(path, []byte(text), 0o700); err != nil {
			h.tb.Fatal(err)
		}
	}
}

// HookRun is one run of the SessionStart hook, as Codex made it.
type HookRun struct {
	Source         string // startup, resume, clear, compact
	Event          string // hook_event_name
	SessionID      string // the input's session_id: the thread id
	TranscriptPath string // the rollout file
	Input          string // the JSON Codex wrote to the hook
	Output         string // what the hook printed
	Context        string // the output's additionalContext
	Stderr         string
	Env            string // the hook's environment (env)
	// Transcript is the rollout as it was when the hook ran ("" if
	// there was none yet).
	Transcript string
}

// Hooks returns the hook's runs so far, in order.
func (h *Host) Hooks() []HookRun {
	envs, _ := filepath.Glob(filepath.Join(h.hookDir, "*.env"))
	sort.Strings(envs)
	var out []HookRun
	for _, env := range envs {
		base := strings.TrimSuffix(env, ".env")
		read := func(ext string) string { b, _ := os.ReadFile(base + ext); return string(b) }
		r := HookRun{Input: read(".in"), Output: read(".out"), Stderr: read(".err"), Transcript: read(".transcript"), Env: read(".fullenv")}
		var in struct {
			SessionID      string `json:"session_id"`
			Source         string `json:"source"`
			Event          string `json:"hook_event_name"`
			TranscriptPath string `json:"transcript_path"`
		}
		json.Unmarshal([]byte(r.Input), &in)
		r.Source, r.SessionID, r.TranscriptPath, r.Event = in.Source, in.SessionID, in.TranscriptPath, in.Event
		var o struct {
			HookSpecificOutput struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		json.Unmarshal([]byte(r.Output), &o)
		r.Context = o.HookSpecificOutput.AdditionalContext
		out = append(out, r)
	}
	return out
}

// MCPServer is one start of the MCP server by Codex.
type MCPServer struct {
	PID, PPID int
	Socket    string // env TASKSESSIOND_SOCKET
	DB        string // env TASKSESSIOND_DB
}

// MCPServers returns the MCP servers Codex started so far, in order.
func (h *Host) MCPServers() []MCPServer {
	var out []MCPServer
	for _, r := range harness.Records(h.mcpLog) {
		pid, _ := strconv.Atoi(r["pid"])
		ppid, _ := strconv.Atoi(r["ppid"])
		out = append(out, MCPServer{PID: pid, PPID: ppid, Socket: r["TASKSESSIOND_SOCKET"], DB: r["TASKSESSIOND_DB"]})
	}
	return out
}

// MCPEnv is the environment of every MCP server started so far (env's
// output, one after the other).
func (h *Host) MCPEnv() string {
	b, _ := os.ReadFile(h.mcpLog + ".env")
	return string(b)
}

// MCPStderr is what the MCP servers wrote to stderr.
func (h *Host) MCPStderr() string {
	b, _ := os.ReadFile(h.mcpErr)
	return string(b)
}

// checkQuiet fails the test if the bridge or the hook wrote to stderr.
func (h *Host) checkQuiet(tb testing.TB) {
	if s := strings.TrimSpace(h.MCPStderr()); s != "" {
		tb.Errorf("the MCP bridge wrote to stderr (it must be silent unless something is wrong):\n%s", s)
	}
	for _, r := range h.Hooks() {
		if r.Stderr != "" {
			tb.Errorf("the hook (source %s, session %s) wrote to stderr:\n%s", r.Source, r.SessionID, r.Stderr)
		}
	}
}

func (h *Host) dumpHooks() string {
	var b strings.Builder
	for i, r := range h.Hooks() {
		fmt.Fprintf(&b, "%d: event=%s source=%s session_id=%s transcript=%s context=%d chars stderr=%q\n   input: %s\n",
			i+1, r.Event, r.Source, r.SessionID, r.TranscriptPath, len(r.Context), r.Stderr, r.Input)
	}
	fmt.Fprintf(&b, "MCP servers: %+v\nMCP stderr: %q\n", h.MCPServers(), h.MCPStderr())
	return b.String()
}
