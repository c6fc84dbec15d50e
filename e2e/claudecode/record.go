package claudecode

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
// what Claude Code gave them (the hook's input, the environment), what the
// hook answered, and both programs' stderr; then they run tasksessiond.

func (h *Host) hookCommand() string { return filepath.Join(h.Root, "bin", "hook.sh") }
func (h *Host) mcpCommand() string  { return filepath.Join(h.Root, "bin", "mcp.sh") }

// shq quotes s for sh.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (h *Host) writeWrappers() {
	hook := `#!/bin/sh
# Records a SessionStart hook run for the test, then passes its output on.
d=` + shq(h.hookDir) + `/$(date +%s%N)-$$
cat >"$d.in"
tp=$(sed -n 's/.*"transcript_path" *: *"\([^"]*\)".*/\1/p' "$d.in")
if [ -n "$tp" ] && [ -f "$tp" ]; then cp "$tp" "$d.transcript"; fi
` + shq(h.TSD) + ` hook claude-code --socket ` + shq(h.Daemon.Socket) + ` <"$d.in" >"$d.out" 2>"$d.err"
printf 'CLAUDE_PID=%s\nCLAUDE_CODE_SESSION_ID=%s\nPPID=%s\n' "$CLAUDE_PID" "$CLAUDE_CODE_SESSION_ID" "$PPID" >"$d.env"
cat "$d.out"
`
	mcp := `#!/bin/sh
# Records the MCP server's start for the test, then becomes it.
printf 'pid=%s ppid=%s CLAUDE_PID=%s CLAUDE_CODE_SESSION_ID=%s\n' "$$" "$PPID" "$CLAUDE_PID" "$CLAUDE_CODE_SESSION_ID" >>` + shq(h.mcpLog) + `
exec ` + shq(h.TSD) + ` mcp "$@" 2>>` + shq(h.mcpErr) + `
`
	for path, text := range map[string]string{h.hookCommand(): hook, h.mcpCommand(): mcp} {
		if err := os.WriteFile(path, []byte(text), 0o700); err != nil {
			h.tb.Fatal(err)
		}
	}
}

// HookRun is one run of the SessionStart hook, as Claude Code made it.
type HookRun struct {
	Source         string // startup, resume, clear, compact
	SessionID      string // the input's session_id
	TranscriptPath string
	ClaudePID      string // env CLAUDE_PID
	EnvSessionID   string // env CLAUDE_CODE_SESSION_ID
	Input          string // the JSON Claude Code wrote to the hook
	Output         string // what the hook printed
	Context        string // the output's additionalContext
	Stderr         string
	// Transcript is the conversation's transcript as it was when the
	// hook ran ("" if there was none yet).
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
		r := HookRun{Input: read(".in"), Output: read(".out"), Stderr: read(".err"), Transcript: read(".transcript")}
		var in struct {
			SessionID      string `json:"session_id"`
			Source         string `json:"source"`
			TranscriptPath string `json:"transcript_path"`
		}
		json.Unmarshal([]byte(r.Input), &in)
		r.Source, r.SessionID, r.TranscriptPath = in.Source, in.SessionID, in.TranscriptPath
		var o struct {
			HookSpecificOutput struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		json.Unmarshal([]byte(r.Output), &o)
		r.Context = o.HookSpecificOutput.AdditionalContext
		for _, line := range strings.Split(read(".env"), "\n") {
			k, v, _ := strings.Cut(line, "=")
			switch k {
			case "CLAUDE_PID":
				r.ClaudePID = v
			case "CLAUDE_CODE_SESSION_ID":
				r.EnvSessionID = v
			}
		}
		out = append(out, r)
	}
	return out
}

// MCPServer is one start of the MCP server by Claude Code.
type MCPServer struct {
	PID          int
	PPID         int    // its parent: Claude Code (the wrapper execs the bridge)
	ClaudePID    string // env CLAUDE_PID
	EnvSessionID string // env CLAUDE_CODE_SESSION_ID
}

// MCPServers returns the MCP servers Claude Code started so far, in order.
func (h *Host) MCPServers() []MCPServer {
	var out []MCPServer
	for _, r := range harness.Records(h.mcpLog) {
		pid, _ := strconv.Atoi(r["pid"])
		ppid, _ := strconv.Atoi(r["ppid"])
		out = append(out, MCPServer{PID: pid, PPID: ppid, ClaudePID: r["CLAUDE_PID"], EnvSessionID: r["CLAUDE_CODE_SESSION_ID"]})
	}
	return out
}

// MCPStderr is what the MCP servers wrote to stderr.
func (h *Host) MCPStderr() string {
	b, _ := os.ReadFile(h.mcpErr)
	return string(b)
}

// checkQuiet fails the test if the bridge or the hook wrote to stderr
// (the MCP SDK's own log, which calls a host's goodbye an error, goes to
// stderr with --verbose only).
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
		fmt.Fprintf(&b, "%d: source=%s session_id=%s CLAUDE_PID=%s CLAUDE_CODE_SESSION_ID=%s context=%d chars stderr=%q\n",
			i+1, r.Source, r.SessionID, r.ClaudePID, r.EnvSessionID, len(r.Context), r.Stderr)
	}
	fmt.Fprintf(&b, "MCP servers: %+v\nMCP stderr: %q\n", h.MCPServers(), h.MCPStderr())
	return b.String()
}
