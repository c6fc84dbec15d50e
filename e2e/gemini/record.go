package gemini

import "github.com/tasksessiond/tasksessiond/e2e/harness"

// HookRun is one run of the hook, as Gemini CLI made it: Event
// SessionStart, BeforeModel, ...; Source (SessionStart) startup, resume or
// clear; PPID the wrapper's parent (Gemini CLI, through bash -c).
type HookRun struct {
	harness.HookRun
	EnvSessionID string // env GEMINI_SESSION_ID
}

// Hooks returns the hook's runs so far, in order (of one event; "" for all).
func (h *Host) Hooks(event string) []HookRun {
	var out []HookRun
	for _, r := range h.Rec.Hooks() {
		if event == "" || r.Event == event {
			out = append(out, HookRun{HookRun: r, EnvSessionID: r.Getenv("GEMINI_SESSION_ID")})
		}
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
	for _, s := range h.Rec.MCPStarts() {
		out = append(out, MCPServer{PID: s.PID, PPID: s.PPID, GeminiCLI: s.Getenv("GEMINI_CLI")})
	}
	return out
}
