package claudecode

import "github.com/tasksessiond/tasksessiond/e2e/harness"

// HookRun is one run of the SessionStart hook, as Claude Code made it:
// Source startup, resume, clear, compact or fork, SessionID the input's
// session_id, Transcript the conversation's transcript as it was when the
// hook ran ("" if there was none yet).
type HookRun struct {
	harness.HookRun
	ClaudePID    string // env CLAUDE_PID
	EnvSessionID string // env CLAUDE_CODE_SESSION_ID
}

// Hooks returns the hook's runs so far, in order.
func (h *Host) Hooks() []HookRun {
	var out []HookRun
	for _, r := range h.Rec.Hooks() {
		out = append(out, HookRun{HookRun: r, ClaudePID: r.Getenv("CLAUDE_PID"), EnvSessionID: r.Getenv("CLAUDE_CODE_SESSION_ID")})
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
	for _, s := range h.Rec.MCPStarts() {
		out = append(out, MCPServer{PID: s.PID, PPID: s.PPID, ClaudePID: s.Getenv("CLAUDE_PID"), EnvSessionID: s.Getenv("CLAUDE_CODE_SESSION_ID")})
	}
	return out
}

// MCPStderr is what the MCP servers wrote to stderr.
func (h *Host) MCPStderr() string { return h.Rec.MCPStderr() }
