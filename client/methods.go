package client

import (
	"context"
	"encoding/json"
	"time"
)

// Task is one entry of a session's task list.
type Task struct {
	Taskid      int    `json:"taskid"`
	Status      string `json:"status"`
	Subject     string `json:"subject"`
	Description string `json:"description"`
}

// Counts are the number of tasks in each status.
type Counts struct {
	Total      int `json:"total"`
	Pending    int `json:"pending"`
	InProgress int `json:"inprogress"`
	Completed  int `json:"completed"`
	Deleted    int `json:"deleted"`
}

// Session is a session's record.
type Session struct {
	ID          string          `json:"id"`
	Title       string          `json:"title"`
	Metadata    json.RawMessage `json:"metadata"`
	Status      string          `json:"status"`
	ParentID    string          `json:"parentId,omitempty"`
	SuccessorID string          `json:"successorId,omitempty"`
	// HeadID is the newest session of the lineage, the one that takes
	// writes; GetSession sets it (to ID unless the session was compacted).
	HeadID    string    `json:"headId,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	Counts    Counts    `json:"counts"`
}

// Message is a message to place at the start of a session's history.
type Message struct {
	Role    string `json:"role"`
	Kind    string `json:"kind"`
	Content string `json:"content"`
}

// ReplayReport says what rebuilding a store by replay did.
type ReplayReport struct {
	Applied        int `json:"applied"`
	SkippedErrors  int `json:"skippedErrors"`
	SkippedInvalid int `json:"skippedInvalid"`
	Divergent      int `json:"divergent"`
}

// Resumed is the result of sessions/resume and sessions/replay.
type Resumed struct {
	Session    Session   `json:"session"`
	Tasks      []Task    `json:"tasks"`
	NextTaskid int       `json:"nextTaskid"`
	Messages   []Message `json:"messages"`
	// ForcedCall is set for a session made by compaction.
	ForcedCall *ForcedCall  `json:"forcedCall,omitempty"`
	Replay     ReplayReport `json:"replay"`
}

// Content is a block of a tool result.
type Content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Structured is a tool result's structuredContent, decoded for any of the
// four tools: TaskCreate and TaskUpdate fill Message, Task, Counts, Open and
// MoreOpen; TaskGet Task and Counts; TaskList Tasks and Counts.
type Structured struct {
	Message  string  `json:"message,omitempty"`
	Task     *Task   `json:"task,omitempty"`
	Tasks    []Task  `json:"tasks,omitempty"`
	Counts   Counts  `json:"counts"`
	Open     []Brief `json:"open,omitempty"`
	MoreOpen int     `json:"moreOpen,omitempty"`
}

// Brief is an open task as a write's overview lists it.
type Brief struct {
	Taskid  int    `json:"taskid"`
	Status  string `json:"status"`
	Subject string `json:"subject"`
}

// CallToolResult is an MCP CallToolResult.
type CallToolResult struct {
	Content           []Content   `json:"content"`
	StructuredContent *Structured `json:"structuredContent,omitempty"`
	IsError           bool        `json:"isError"`
	// Raw is the result exactly as the daemon sent it.
	Raw json.RawMessage `json:"-"`
}

// Text is the result's text, for the model.
func (r *CallToolResult) Text() string {
	var s string
	for _, c := range r.Content {
		s += c.Text
	}
	return s
}

// ToolCall is a tools/call.
type ToolCall struct {
	SessionID string `json:"sessionId"`
	Name      string `json:"name"`
	// Arguments is an object, or a string holding one as OpenAI-style hosts receive it.
	Arguments any    `json:"arguments,omitempty"`
	CallID    string `json:"callId,omitempty"`
	Role      string `json:"role,omitempty"`
}

// CallTool forwards a model's tool call. A tool failure is a result with
// IsError set, not an error.
func (c *Client) CallTool(ctx context.Context, p ToolCall) (*CallToolResult, error) {
	var raw json.RawMessage
	if err := c.Call(ctx, "tools/call", p, &raw); err != nil {
		return nil, err
	}
	r := &CallToolResult{Raw: raw}
	if err := json.Unmarshal(raw, r); err != nil {
		return nil, err
	}
	return r, nil
}

// ListTools returns the tool definitions in a provider's format ("mcp",
// "anthropic" or "openai"), for a role ("agent" or "compact_worker").
func (c *Client) ListTools(ctx context.Context, role, format string) ([]json.RawMessage, error) {
	var out struct {
		Tools []json.RawMessage `json:"tools"`
	}
	err := c.Call(ctx, "tools/list", map[string]string{"role": role, "format": format}, &out)
	return out.Tools, err
}

// CreateSession is a sessions/create. An empty ID asks the daemon for one.
type CreateSession struct {
	SessionID string `json:"sessionId,omitempty"`
	Title     string `json:"title,omitempty"`
	Metadata  any    `json:"metadata,omitempty"`
}

// CreateSession makes a new, empty session.
func (c *Client) CreateSession(ctx context.Context, p CreateSession) (Session, error) {
	var out struct {
		Session Session `json:"session"`
	}
	err := c.Call(ctx, "sessions/create", p, &out)
	return out.Session, err
}

// ResumeSession loads a session (by replay when the daemon does not hold
// it) and returns its tasks and injected messages.
func (c *Client) ResumeSession(ctx context.Context, id string) (Resumed, error) {
	var out Resumed
	err := c.Call(ctx, "sessions/resume", map[string]string{"sessionId": id}, &out)
	return out, err
}

// GetSession returns a session's record.
func (c *Client) GetSession(ctx context.Context, id string) (Session, error) {
	var out struct {
		Session Session `json:"session"`
	}
	err := c.Call(ctx, "sessions/get", map[string]string{"sessionId": id}, &out)
	return out.Session, err
}

// ListSessions is a sessions/list.
type ListSessions struct {
	Status string `json:"status,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// ListSessions returns a page of sessions, newest first, and the cursor of
// the next page ("" at the end).
func (c *Client) ListSessions(ctx context.Context, p ListSessions) ([]Session, string, error) {
	var out struct {
		Sessions   []Session `json:"sessions"`
		NextCursor string    `json:"nextCursor"`
	}
	err := c.Call(ctx, "sessions/list", p, &out)
	return out.Sessions, out.NextCursor, err
}

// TranscriptCall is one call of a host's own transcript.
type TranscriptCall struct {
	Name      string `json:"name"`
	Arguments any    `json:"arguments,omitempty"`
	CallID    string `json:"callId,omitempty"`
	IsError   bool   `json:"isError,omitempty"`
}

// ReplaySession builds a new session's store from a host's transcript.
func (c *Client) ReplaySession(ctx context.Context, id string, calls []TranscriptCall) (Resumed, error) {
	var out Resumed
	err := c.Call(ctx, "sessions/replay", map[string]any{"sessionId": id, "calls": calls}, &out)
	return out, err
}

// Status is daemon/status.
type Status struct {
	Version       string  `json:"version"`
	Uptime        string  `json:"uptime"`
	UptimeSeconds float64 `json:"uptimeSeconds"`
	Database      string  `json:"database"`
	Socket        string  `json:"socket"`
	PID           int     `json:"pid"`
	Sessions      struct {
		Loaded int `json:"loaded"`
		Total  int `json:"total"`
	} `json:"sessions"`
	CallsServed int64 `json:"callsServed"`
	// WAL is the write-ahead log as the daemon's last checkpoint found it.
	WAL struct {
		Bytes        int64 `json:"bytes"`
		Frames       int   `json:"frames"`
		Checkpointed int   `json:"checkpointed"`
	} `json:"wal"`
}

// Status reports on the daemon.
func (c *Client) Status(ctx context.Context) (Status, error) {
	var out Status
	err := c.Call(ctx, "daemon/status", nil, &out)
	return out, err
}

// Snapshot is the whole store of a session, for a compact worker.
type Snapshot struct {
	Tasks      []Task `json:"tasks"`
	NextTaskid int    `json:"nextTaskid"`
	// Text is the rendering that compaction injects.
	Text string `json:"text"`
}

// Snapshot returns a session's whole store; it changes nothing.
func (c *Client) Snapshot(ctx context.Context, id string) (Snapshot, error) {
	var out Snapshot
	err := c.Call(ctx, "sessions/snapshot", map[string]string{"sessionId": id}, &out)
	return out, err
}

// Compact is a sessions/compact.
type Compact struct {
	SessionID    string `json:"sessionId"`
	Summary      string `json:"summary,omitempty"`
	NewSessionID string `json:"newSessionId,omitempty"`
}

// ForcedCall is the TaskList a host places, as a tool call and its result,
// at the start of the successor's history.
type ForcedCall struct {
	CallID    string          `json:"callId"`
	Name      string          `json:"name"`
	Arguments map[string]any  `json:"arguments"`
	Result    json.RawMessage `json:"result"`
}

// Compacted is the result of sessions/compact.
type Compacted struct {
	// Session is the successor, which the host continues with.
	Session Session `json:"session"`
	// Messages go first in the successor's history.
	Messages   []Message  `json:"messages"`
	ForcedCall ForcedCall `json:"forcedCall"`
}

// Compact seals a session and returns its successor, which holds every
// task and goes on numbering where the old one stopped.
func (c *Client) Compact(ctx context.Context, p Compact) (Compacted, error) {
	var out Compacted
	err := c.Call(ctx, "sessions/compact", p, &out)
	return out, err
}

// Event is a committed change to a watched session, from
// notifications/tasks/changed (Op create or update, with Task) or
// notifications/sessions/compacted (Op compacted, with SuccessorID).
type Event struct {
	SessionID   string `json:"sessionId"`
	Seq         int64  `json:"seq"`
	Op          string `json:"op"`
	Task        *Task  `json:"task"`
	SuccessorID string `json:"successorId"`
}

// Notification methods of sessions/watch.
const (
	NotifyTasksChanged     = "notifications/tasks/changed"
	NotifySessionCompacted = "notifications/sessions/compacted"
	NotifyWatchLagged      = "notifications/sessions/watchLagged"
)

// Watch subscribes this connection to a session's committed changes; they
// arrive through the function set with OnNotification (decode them with
// DecodeEvent).
func (c *Client) Watch(ctx context.Context, id string) error {
	return c.Call(ctx, "sessions/watch", map[string]string{"sessionId": id}, nil)
}

// DecodeEvent decodes a watch notification.
func DecodeEvent(n Notification) (Event, error) {
	var e Event
	err := json.Unmarshal(n.Params, &e)
	return e, err
}
