// Package wire declares tasksessiond's JSON-RPC contract once: each
// method's name, params and result, the notifications, and the error
// codes. The daemon answers in these types and the Go client decodes them,
// so the compiler ties the two; docs/PROTOCOL.md describes the same, and a
// test holds it to this package.
package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tasksessiond/tasksessiond"
)

// Methods, as sent in a request's "method".
const (
	MethodToolsList        = "tools/list"
	MethodToolsCall        = "tools/call"
	MethodSessionsCreate   = "sessions/create"
	MethodSessionsResume   = "sessions/resume"
	MethodSessionsGet      = "sessions/get"
	MethodSessionsList     = "sessions/list"
	MethodSessionsReplay   = "sessions/replay"
	MethodSessionsSnapshot = "sessions/snapshot"
	MethodSessionsCompact  = "sessions/compact"
	MethodSessionsWatch    = "sessions/watch"
	MethodSessionsWatchAll = "sessions/watchAll"
	MethodDaemonStatus     = "daemon/status"
)

// Methods lists every method, with a zero value of its params and of its
// result (nil where the result is opaque or empty).
var Methods = []struct {
	Name           string
	Params, Result any
}{
	{MethodToolsList, ToolsList{}, ToolsListResult{}},
	{MethodToolsCall, ToolCall{}, CallToolResult{}},
	{MethodSessionsCreate, CreateSession{}, SessionResult{}},
	{MethodSessionsResume, SessionText{}, Resumed{}},
	{MethodSessionsGet, SessionRef{}, SessionResult{}},
	{MethodSessionsList, tasksessiond.ListFilter{}, ListSessionsResult{}},
	{MethodSessionsReplay, ReplaySession{}, Resumed{}},
	{MethodSessionsSnapshot, SessionText{}, Snapshot{}},
	{MethodSessionsCompact, Compact{}, Compacted{}},
	{MethodSessionsWatch, SessionRef{}, struct{}{}},
	{MethodSessionsWatchAll, struct{}{}, struct{}{}},
	{MethodDaemonStatus, struct{}{}, DaemonStatus{}},
}

// Notifications the daemon sends on a connection that called sessions/watch
// or sessions/watchAll.
const (
	NotifyTasksChanged     = "notifications/tasks/changed"
	NotifySessionCompacted = "notifications/sessions/compacted"
	NotifyWatchLagged      = "notifications/sessions/watchLagged"
	// NotifyWatchEnded ends one watch, with a Message saying why: in fleet
	// mode, the session is now served by another daemon (watch it there).
	NotifyWatchEnded = "notifications/sessions/watchEnded"
)

// ResponseHead is how every response the daemon writes begins, its id
// next: a client reads the id from it without decoding the line twice.
const ResponseHead = `{"jsonrpc":"2.0","id":`

// Error codes: JSON-RPC's own, then the daemon's. They are declared here
// only; the daemon, its session layer and the client all use these.
const (
	CodeParseError         int64 = -32700
	CodeInvalidRequest     int64 = -32600
	CodeMethodNotFound     int64 = -32601
	CodeInvalidParams      int64 = -32602
	CodeInternal           int64 = -32603
	CodeSessionNotFound    int64 = -32001
	CodeSessionSealed      int64 = -32002 // data: SealedData
	CodeCallIDConflict     int64 = -32003
	CodeStorageUnavailable int64 = -32004
	CodeSessionExists      int64 = -32005
	CodeSessionLeased      int64 = -32006 // data: LeasedData
	CodeSessionDamaged     int64 = -32007 // the session's log fails its check; the message names it
)

// LeasedData is the data of a CodeSessionLeased error: the daemon of a
// fleet that serves the session, and when its lease ends unless renewed.
type LeasedData struct {
	Owner     string    `json:"owner"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// SealedData is the data of a CodeSessionSealed error.
type SealedData struct {
	SuccessorID string `json:"successorId"`
}

// ForcedCall is the TaskList a host places, as a tool call and its result,
// at the start of a successor's history.
type ForcedCall struct {
	CallID    string          `json:"callId"`
	Name      string          `json:"name"`
	Arguments map[string]any  `json:"arguments"`
	Result    json.RawMessage `json:"result"` // a CallToolResult
}

// ToolsList is the params of tools/list.
type ToolsList struct {
	Role   string `json:"role,omitempty"`   // agent (default) or compact_worker
	Format string `json:"format,omitempty"` // mcp (default), anthropic or openai
}

// ToolsListResult is the result of tools/list: the definitions in the
// format asked for.
type ToolsListResult struct {
	Tools []json.RawMessage `json:"tools"`
}

// ToolCall is the params of tools/call.
type ToolCall struct {
	SessionID string `json:"sessionId"`
	Name      string `json:"name"`
	// Arguments is an object, or a string holding one (as OpenAI-style
	// hosts receive it).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	CallID    string          `json:"callId,omitempty"`
	Role      string          `json:"role,omitempty"`
}

// Content is a block of a tool result.
type Content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// The structured results of the tools (each tool's outputSchema in
// tools/list gives its exact shape): the daemon encodes these very types,
// and the client decodes into them.

// Written is the structured result of TaskCreate and TaskUpdate: the task
// as written (its id, status and subject: the description the caller has
// just given is not echoed back, TaskGet shows it) and the list after the
// change. The text the model reads says the same: "#3 inprogress:
// Subject", then "16 pending, inprogress #3, 3 completed".
type Written struct {
	Task Brief `json:"task"`
	Overview
}

// Overview is the list after a change: the counts by status and the ids of
// the tasks in progress (the first 10, in taskid order).
type Overview struct {
	Counts     tasksessiond.Counts `json:"counts"`
	InProgress []int               `json:"inProgress,omitempty"`
}

// Brief is a task without its description, as a write's result shows it.
type Brief struct {
	Taskid  int                 `json:"taskid"`
	Status  tasksessiond.Status `json:"status"`
	Subject string              `json:"subject"`
}

// Got is TaskGet's structured result.
type Got struct {
	Counts tasksessiond.Counts `json:"counts"`
	Task   tasksessiond.Task   `json:"task"`
}

// Listing is TaskList's structured result: the counts, then the store's
// snapshot in taskid order (an empty list is [], never absent). A list too
// long for the host's limit is shortened, and Note says so: descriptions
// are cut or left out (TaskGet shows any task whole), runs of closed
// tasks are folded in place into Folded (their ids, from and to, and
// their status) and left out of Tasks, and at last open tasks past what
// fits are counted in MoreOpen.
type Listing struct {
	Counts   tasksessiond.Counts `json:"counts"`
	Note     string              `json:"note,omitempty"`
	Tasks    []tasksessiond.Task `json:"tasks"`
	Folded   []Fold              `json:"folded,omitempty"`
	MoreOpen int                 `json:"moreOpen,omitempty"`
}

// Fold is a run of closed tasks of one status, consecutive in taskid order,
// that a shortened Listing shows as one line ("#1–#40 completed").
type Fold struct {
	From   int                 `json:"from"`
	To     int                 `json:"to"`
	Status tasksessiond.Status `json:"status"`
}

// CallToolResult is the result of tools/call: an MCP CallToolResult.
// StructuredContent is one of Written, Got and Listing, by the tool called:
// the methods of the same names decode it.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError"`
	// Raw is the result exactly as the daemon sent it (set by the client).
	Raw json.RawMessage `json:"-"`
}

// Written decodes the structured result of TaskCreate or TaskUpdate.
func (r *CallToolResult) Written() (Written, error) {
	var v Written
	return v, r.decode(&v)
}

// Got decodes the structured result of TaskGet.
func (r *CallToolResult) Got() (Got, error) {
	var v Got
	return v, r.decode(&v)
}

// Listing decodes the structured result of TaskList.
func (r *CallToolResult) Listing() (Listing, error) {
	var v Listing
	return v, r.decode(&v)
}

func (r *CallToolResult) decode(v any) error {
	if len(r.StructuredContent) == 0 {
		return errors.New("the result has no structured content (an error result has none)")
	}
	if err := json.Unmarshal(r.StructuredContent, v); err != nil {
		return fmt.Errorf("decode structured content: %w", err)
	}
	return nil
}

// Text is the result's text, for the model.
func (r *CallToolResult) Text() string {
	var s string
	for _, c := range r.Content {
		s += c.Text
	}
	return s
}

// CreateSession is the params of sessions/create. An empty SessionID asks
// the daemon for one.
type CreateSession struct {
	SessionID string          `json:"sessionId,omitempty"`
	Title     string          `json:"title,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"` // an object
}

// SessionRef is the params of the methods that name one session.
type SessionRef struct {
	SessionID string `json:"sessionId"`
}

// SessionText is the params of sessions/resume and sessions/snapshot: the
// session, and the most characters (UTF-16 code units, as JavaScript
// counts them) of list text a host can give the model (0: the whole
// list). A text over it (the snapshot's text, a task_snapshot message) is
// fitted with the ladder of the hooks: whole when it fits, else closed
// tasks and long descriptions shortened first, every open task's id,
// status and subject kept as long as there is room.
type SessionText struct {
	SessionID string `json:"sessionId"`
	MaxChars  int    `json:"maxChars,omitempty"`
}

// SessionResult is the result of sessions/create and sessions/get.
type SessionResult struct {
	Session tasksessiond.Session `json:"session"`
}

// ListSessionsResult is the result of sessions/list, newest first.
type ListSessionsResult struct {
	Sessions   []tasksessiond.Session `json:"sessions"`
	NextCursor string                 `json:"nextCursor,omitempty"` // "" on the last page
}

// Resumed is the result of sessions/resume and sessions/replay.
type Resumed struct {
	Session    tasksessiond.Session   `json:"session"`
	Tasks      []tasksessiond.Task    `json:"tasks"`
	NextTaskid int                    `json:"nextTaskid"`
	Messages   []tasksessiond.Message `json:"messages"`
	// ForcedCall is set for a session made by compaction.
	ForcedCall *ForcedCall               `json:"forcedCall,omitempty"`
	Replay     tasksessiond.ReplayReport `json:"replay"`
	// LastSeq is the seq of the session's last logged call (0: none): the
	// list is as of that call, so a watch subscribed before it was read
	// has every later change as an event with a greater seq.
	LastSeq int64 `json:"lastSeq"`
}

// TranscriptCall is one call of a host's own transcript.
type TranscriptCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	CallID    string          `json:"callId,omitempty"`
	IsError   bool            `json:"isError,omitempty"`
}

// ReplaySession is the params of sessions/replay.
type ReplaySession struct {
	SessionID string           `json:"sessionId"`
	Calls     []TranscriptCall `json:"calls"`
}

// Snapshot is the result of sessions/snapshot: the whole store, for a
// compact worker.
type Snapshot struct {
	Tasks      []tasksessiond.Task `json:"tasks"`
	NextTaskid int                 `json:"nextTaskid"`
	Text       string              `json:"text"` // the rendering compaction injects
}

// Compact is the params of sessions/compact.
type Compact struct {
	SessionID    string `json:"sessionId"`
	Summary      string `json:"summary,omitempty"`
	NewSessionID string `json:"newSessionId,omitempty"`
}

// Compacted is the result of sessions/compact.
type Compacted struct {
	Session    tasksessiond.Session   `json:"session"`  // the successor, which the host continues with
	Messages   []tasksessiond.Message `json:"messages"` // first in the successor's history
	ForcedCall ForcedCall             `json:"forcedCall"`
}

// Event is the params of a watch notification: a committed change (Op
// create or update, with Task), a compaction (Op compacted, with
// SuccessorID), or, for watchLagged, Message.
type Event struct {
	SessionID   string             `json:"sessionId"`
	Seq         int64              `json:"seq,omitempty"`
	Op          string             `json:"op,omitempty"`
	Task        *tasksessiond.Task `json:"task,omitempty"`
	SuccessorID string             `json:"successorId,omitempty"`
	Message     string             `json:"message,omitempty"`
}

// DaemonStatus is the result of daemon/status.
type DaemonStatus struct {
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
	// WAL is SQLite's write-ahead log as the daemon's last checkpoint
	// found it; absent in fleet mode.
	WAL *tasksessiond.WAL `json:"wal,omitempty"`
	// Fleet is this daemon as a lease holder, in fleet mode only.
	Fleet *FleetStatus `json:"fleet,omitempty"`
	// Problem is what is wrong with the database as a whole (its file
	// deleted under the daemon, say); absent when nothing is.
	Problem string `json:"problem,omitempty"`
	// Refused are the sessions this daemon has refused because their log
	// fails its check (-32007), with why; absent when none.
	Refused []RefusedSession `json:"refused,omitempty"`
}

// RefusedSession is a session refused as damaged, and why.
type RefusedSession struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// FleetStatus is a fleet daemon's leases.
type FleetStatus struct {
	LeaseOwner string `json:"leaseOwner"` // this daemon's lease id, host and pid, as -32006 names it
	LeasesHeld int    `json:"leasesHeld"` // sessions whose lease it holds
	Lease      string `json:"lease"`      // --lease
}
