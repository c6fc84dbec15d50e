// Package copilot is everything tasksessiond knows about GitHub Copilot CLI.
package copilot

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/host"
)

func init() { host.Register(Host{}) }

// Host is GitHub Copilot CLI.
type Host struct{}

var (
	_ host.Host    = Host{}
	_ host.Starter = Host{}
	_ host.Client  = Host{}
	_ host.Hooker  = Host{}
	_ host.Helper  = Host{}
	_ host.History = Host{}
)

// name is the host's name on the command line.
const name = "copilot"

// Name is the host's name on the command line.
func (Host) Name() string { return name }

// Title is the host's name for people.
func (Host) Title() string { return "GitHub Copilot CLI" }

// envSession is set by Copilot CLI for the MCP servers it starts: its
// session's id, the same on --resume and across compaction.
const envSession = "COPILOT_AGENT_SESSION_ID"

// Serves binds the bridge to the session Copilot CLI names, created on
// first use, rebuilt from the session's events.jsonl when that holds Task
// calls (a database lost). A call whose _meta names a session (the
// preMcpToolCall hook's) goes to that one instead: /new or /resume in one
// Copilot CLI process changes the session under one MCP server.
func (Host) Serves(e host.Env) (host.Serving, bool) {
	id := e.Getenv(envSession)
	if id == "" {
		return host.Serving{}, false
	}
	return host.Serving{SessionID: id, History: Host{}, Transcript: func(id string) string { return eventsFile(e.Getenv, id) }}, true
}

// eventsFile is where Copilot CLI records session id:
// $COPILOT_HOME (default ~/.copilot)/session-state/<id>/events.jsonl.
func eventsFile(getenv func(string) string, id string) string {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return ""
	}
	dir := getenv("COPILOT_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".copilot")
	}
	return filepath.Join(dir, "session-state", id, "events.jsonl")
}

// metaKey names, in a call's _meta, the session the preMcpToolCall hook
// says the call is made in.
const metaKey = "copilot/sessionId"

// IsClient reports whether the MCP client is Copilot CLI.
func (Host) IsClient(name string) bool {
	return strings.Contains(strings.ToLower(name), "copilot")
}

// Conversation returns the session the preMcpToolCall hook put in a
// call's _meta.
func (Host) Conversation(meta map[string]any) string {
	if id, ok := meta[metaKey].(string); ok && id != "" && len(id) <= 256 {
		return id
	}
	return ""
}

// ResultBytes bounds a TaskList result under Copilot CLI: it keeps an MCP
// result of more than 20,480 bytes out of the model's context (its events
// name the bound, large_output_threshold_bytes).
const ResultBytes = 20_000

// ResultBytes is the package's ResultBytes.
func (Host) ResultBytes() int { return ResultBytes }

// CallsBefore reads the Task calls of the events.jsonl at path.
func (Host) CallsBefore(ctx context.Context, path, server string, _ map[string]any) ([]client.TranscriptCall, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil // a new session: nothing recorded yet
	}
	return Calls(ctx, path, server)
}

// Help says what the bridge and the hook do under Copilot CLI.
func (Host) Help(command string) string {
	switch command {
	case "mcp":
		return "its session ($" + envSession + "), or the one a call's _meta names\n    (the preMcpToolCall hook's)"
	case "hook":
		return `"tasksessiond hook copilot" is GitHub Copilot CLI's hook, for sessionStart
(the list on resume), preCompact (it compacts the session and owes the model
its list), postToolUse and userPromptSubmitted (they deliver what is owed,
once) and preMcpToolCall (it names the session in each call's _meta).`
	}
	return ""
}
