package codex

import (
	"strings"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
)

// HookRun is one run of the SessionStart hook, as Codex made it: Event is
// SessionStart, Source startup, resume or compact, SessionID the thread
// id, TranscriptPath (and Transcript, as it was) the rollout, Env Codex's
// whole environment.
type HookRun = harness.HookRun

// Hooks returns the hook's runs so far, in order.
func (h *Host) Hooks() []HookRun { return h.Rec.Hooks() }

// MCPServer is one start of the MCP server by Codex.
type MCPServer struct {
	PID, PPID int
	Socket    string // env TASKSESSIOND_SOCKET
	DB        string // env TASKSESSIOND_DB
}

// MCPServers returns the MCP servers Codex started so far, in order.
func (h *Host) MCPServers() []MCPServer {
	var out []MCPServer
	for _, s := range h.Rec.MCPStarts() {
		out = append(out, MCPServer{PID: s.PID, PPID: s.PPID, Socket: s.Getenv("TASKSESSIOND_SOCKET"), DB: s.Getenv("TASKSESSIOND_DB")})
	}
	return out
}

// MCPEnv is the environment of every MCP server started so far (env's
// output, one after the other).
func (h *Host) MCPEnv() string {
	var b strings.Builder
	for _, s := range h.Rec.MCPStarts() {
		b.WriteString(s.Env)
	}
	return b.String()
}
