package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/wire"
)

// ToolCall is a tools/call as a Go host builds it: Arguments is any value
// that marshals to the arguments object (a map, a struct, json.RawMessage,
// or a string holding the object).
type ToolCall struct {
	SessionID string
	Name      string
	Arguments any
	CallID    string
	Role      string
}

func (p ToolCall) wire() (wire.ToolCall, error) {
	w := wire.ToolCall{SessionID: p.SessionID, Name: p.Name, CallID: p.CallID, Role: p.Role}
	if p.Arguments != nil {
		b, err := json.Marshal(p.Arguments)
		if err != nil {
			return w, fmt.Errorf("tools/call: encode arguments: %w", err)
		}
		w.Arguments = b
	}
	return w, nil
}

// CallTool forwards a model's tool call. A tool failure is a result with
// IsError set, not an error. The result's Written, Got and Listing methods
// decode its structured content in the types the daemon encoded it from.
func (c *Client) CallTool(ctx context.Context, p ToolCall) (*wire.CallToolResult, error) {
	w, err := p.wire()
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := c.Call(ctx, wire.MethodToolsCall, w, &raw); err != nil {
		return nil, err
	}
	r := &wire.CallToolResult{Raw: raw}
	if err := json.Unmarshal(raw, r); err != nil {
		return nil, err
	}
	return r, nil
}

// ListTools returns the tool definitions in a provider's format ("mcp",
// "anthropic" or "openai"), for a role ("agent" or "compact_worker").
func (c *Client) ListTools(ctx context.Context, role, format string) ([]json.RawMessage, error) {
	var out wire.ToolsListResult
	err := c.Call(ctx, wire.MethodToolsList, wire.ToolsList{Role: role, Format: format}, &out)
	return out.Tools, err
}

// CreateSession makes a new, empty session.
func (c *Client) CreateSession(ctx context.Context, p wire.CreateSession) (tasksessiond.Session, error) {
	var out wire.SessionResult
	err := c.Call(ctx, wire.MethodSessionsCreate, p, &out)
	return out.Session, err
}

// ResumeSession loads a session (by replay when the daemon does not hold
// it) and returns its tasks and injected messages.
func (c *Client) ResumeSession(ctx context.Context, id string) (wire.Resumed, error) {
	var out wire.Resumed
	err := c.Call(ctx, wire.MethodSessionsResume, wire.SessionRef{SessionID: id}, &out)
	return out, err
}

// GetSession returns a session's record.
func (c *Client) GetSession(ctx context.Context, id string) (tasksessiond.Session, error) {
	var out wire.SessionResult
	err := c.Call(ctx, wire.MethodSessionsGet, wire.SessionRef{SessionID: id}, &out)
	return out.Session, err
}

// Head returns the newest session of id's lineage — id's own record unless
// it has been compacted — which is where its task list now lives and where
// writes go. It costs one round trip, two after a compaction.
func (c *Client) Head(ctx context.Context, id string) (tasksessiond.Session, error) {
	s, err := c.GetSession(ctx, id)
	if err != nil || s.HeadID == "" || s.HeadID == s.ID {
		return s, err
	}
	return c.GetSession(ctx, s.HeadID)
}

// ListSessions returns a page of sessions, newest first, and the cursor of
// the next page ("" at the end).
func (c *Client) ListSessions(ctx context.Context, p tasksessiond.ListFilter) ([]tasksessiond.Session, string, error) {
	var out wire.ListSessionsResult
	err := c.Call(ctx, wire.MethodSessionsList, p, &out)
	return out.Sessions, out.NextCursor, err
}

// TranscriptCall is one call of a host's own transcript, as a Go host
// builds it (Arguments as in ToolCall).
type TranscriptCall struct {
	Name      string
	Arguments any
	CallID    string
	IsError   bool
}

// ReplaySession builds a new session's store from a host's transcript.
func (c *Client) ReplaySession(ctx context.Context, id string, calls []TranscriptCall) (wire.Resumed, error) {
	p := wire.ReplaySession{SessionID: id, Calls: make([]wire.TranscriptCall, len(calls))}
	for i, tc := range calls {
		w, err := ToolCall{Arguments: tc.Arguments}.wire()
		if err != nil {
			return wire.Resumed{}, err
		}
		p.Calls[i] = wire.TranscriptCall{Name: tc.Name, Arguments: w.Arguments, CallID: tc.CallID, IsError: tc.IsError}
	}
	var out wire.Resumed
	err := c.Call(ctx, wire.MethodSessionsReplay, p, &out)
	return out, err
}

// Status reports on the daemon.
func (c *Client) Status(ctx context.Context) (wire.DaemonStatus, error) {
	var out wire.DaemonStatus
	err := c.Call(ctx, wire.MethodDaemonStatus, nil, &out)
	return out, err
}

// Snapshot returns a session's whole store; it changes nothing.
func (c *Client) Snapshot(ctx context.Context, id string) (wire.Snapshot, error) {
	var out wire.Snapshot
	err := c.Call(ctx, wire.MethodSessionsSnapshot, wire.SessionRef{SessionID: id}, &out)
	return out, err
}

// Compact seals a session and returns its successor, which holds every
// task and goes on numbering where the old one stopped.
func (c *Client) Compact(ctx context.Context, p wire.Compact) (wire.Compacted, error) {
	var out wire.Compacted
	err := c.Call(ctx, wire.MethodSessionsCompact, p, &out)
	return out, err
}

// Notification methods of sessions/watch.
const (
	NotifyTasksChanged     = wire.NotifyTasksChanged
	NotifySessionCompacted = wire.NotifySessionCompacted
	NotifyWatchLagged      = wire.NotifyWatchLagged
)

// Watch subscribes this connection to a session's committed changes; they
// arrive through the function set with OnNotification (decode them with
// DecodeEvent).
func (c *Client) Watch(ctx context.Context, id string) error {
	return c.Call(ctx, wire.MethodSessionsWatch, wire.SessionRef{SessionID: id}, nil)
}

// WatchAll subscribes this connection to the committed changes of every
// session, those created later included (a board's one subscription); the
// notifications are those of Watch, each naming its session.
func (c *Client) WatchAll(ctx context.Context) error {
	return c.Call(ctx, wire.MethodSessionsWatchAll, nil, nil)
}

// DecodeEvent decodes a watch notification.
func DecodeEvent(n Notification) (wire.Event, error) {
	var e wire.Event
	err := json.Unmarshal(n.Params, &e)
	return e, err
}
