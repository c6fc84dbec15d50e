package gemini

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
// what Gemini CLI gave them (the hook's input, the environment), what the
// hook answered, and both programs' stderr; then they run tasksessiond.

func (h *Host) hookCommand() string { return filepath.Join(h.Root, "bin", "hook.sh") }
func (h *Host) mcpCommand() string  { return filepath.Join(h.Root, "bin", "mcp.sh") }

// shq quotes s for sh.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (h *Host) writeWrappers(hookArgs []string) {
	var extra string
	for _, a := range hookArgs {
		extra += " " + shq(a)
	}
	hook := `#!/bin/sh
# Records a hook run for the test, then passes its output on.
d=` + shq(h.hookDir) + `/$(date +%s%N)-$$
cat >"$d.in"
printf 'GEMINI_SESSION_ID=%s\nPPID=%s\n' "$GEMINI_SESSION_ID" "$PPID" >"$d.env"
` + shq(h.TSD) + ` hook gemini --socket ` + shq(h.Daemon.Socket) + ` --db ` + shq(h.Daemon.DB) + extra + ` <"$d.in" >"$d.out" 2>"$d.err"
cat "$d.out"
`
	mcp := `#!/bin/sh
# Records the MCP server's start for the test, then becomes it.
printf 'pid=%s ppid=%s GEMINI_CLI=%s\n' "$$" "$PPID" "$GEMINI_CLI" >>` + shq(h.mcpLog) + `
exec ` + shq(h.TSD) + ` mcp "$@" 2>>` + shq(h.mcpErr) + `
`
	for path, text := range map[string]string{h.hookCommand(): hook, h.mcpCommand(): mcp} {
		if err := os.WriteFile(path, []byte(text), 0o700); err != nil {
			h.tb.Fatal(err)
		}
	}
}

// HookRun is one run of the hook, as Gemini CLI made it.
type HookRun struct {
	Event          string // hook_event_name: SessionStart, BeforeModel, ...
	Source         string // SessionStart: startup, resume, clear
	SessionID      string // the input's session_id
	TranscriptPath string
	EnvSessionID   string // env GEMINI_SESSION_ID
	PPID           int    // the wrapper's parent (Gemini CLI, through bash -c)
	Input          string // the JSON Gemini CLI wrote to the hook
	Output         string // what the hook printed
	Context        string // the output's hookSpecificOutput.additionalContext
	Stderr         string
}

// Hooks returns the hook's runs so far, in order (of one event; "" for all).
func (h *Host) Hooks(event string) []HookRun {
	envs, _ := filepath.Glob(filepath.Join(h.hookDir, "*.env"))
	sort.Strings(envs)
	var out []HookRun
	for _, env := range envs {
		base := strings.TrimSuffix(env, ".env")
		read := func(ext string) string { b, _ := os.ReadFile(base + ext); return string(b) }
		r := HookRun{Input: read(".in"), Output: read(".out"), Stderr: read(".err")}
		var in struct {
			Event          string `json:"hook_event_name"`
			SessionID      string `json:"session_id"`
			Source         string `json:"source"`
			TranscriptPath string `json:"transcript_path"`
		}
		json.Unmarshal([]byte(r.Input), &in)
		r.Event, r.Source, r.SessionID, r.TranscriptPath = in.Event, in.Source, in.SessionID, in.TranscriptPath
		if event != "" && r.Event != event {
			continue
		}
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
			case "GEMINI_SESSION_ID":
				r.EnvSessionID = v
			case "PPID":
				r.PPID, _ = strconv.Atoi(v)
			}
		}
		out = append(out, r)
	}
	return out
}

// MCPServer is one start of the MCP server by Gemini CLI.
type MCPServer struct {
	PID, PPID int
	GeminiCLI string // env GEMINI_CLI
}

// MCPServers returns the MCP servers started so far, in order.
func (h *Host) MCPServers() []MCPServer {
	var out []MCPServer
	for _, r := range harness.Records(h.mcpLog) {
		pid, _ := strconv.Atoi(r["pid"])
		ppid, _ := strconv.Atoi(r["ppid"])
		out = append(out, MCPServer{PID: pid, PPID: ppid, GeminiCLI: r["GEMINI_CLI"]})
	}
	return out
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
	for _, r := range h.Hooks("") {
		if r.Stderr != "" {
			tb.Errorf("the hook (%s %s, session %s) wrote to stderr:\n%s", r.Event, r.Source, r.SessionID, r.Stderr)
		}
	}
}

func (h *Host) dumpHooks() string {
	var b strings.Builder
	for i, r := range h.Hooks("") {
		fmt.Fprintf(&b, "%d: %s source=%s session_id=%s GEMINI_SESSION_ID=%s ppid=%d output=%d bytes context=%d chars stderr=%q\n",
			i+1, r.Event, r.Source, r.SessionID, r.EnvSessionID, r.PPID, len(r.Output), len(r.Context), r.Stderr)
	}
	fmt.Fprintf(&b, "MCP servers: %+v\nMCP stderr: %q\n", h.MCPServers(), h.MCPStderr())
	return b.String()
}
