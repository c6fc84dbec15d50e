package mcpbridge_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/binding"
	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/claudecode"
	"github.com/tasksessiond/tasksessiond/internal/host/codex"
	"github.com/tasksessiond/tasksessiond/internal/mcpbridge"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

var ctx = context.Background()

// clients are the hosts the bridge recognises by their MCP client.
var clients = []host.Client{codex.Host{}}

// serve runs a bridge for cfg and returns a real MCP client session on it.
func serve(t *testing.T, cfg mcpbridge.Config) (*mcp.ClientSession, *mcpbridge.Bridge) {
	t.Helper()
	b, err := mcpbridge.New(cfg)
	require.NoError(t, err)
	ct, st := mcp.NewInMemoryTransports()
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); b.Run(runCtx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	return cs, b
}

// textOnly checks that the four tools are listed without an outputSchema:
// the bridge sends the model the text alone, the leaner form in every host.
func textOnly(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list.Tools, 4)
	for _, tool := range list.Tools {
		assert.Nil(t, tool.OutputSchema, tool.Name)
	}
}

// callTool calls a tool and, for a success, checks it is text alone and
// returns the tasks its text names.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, structured) {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "a tool call is never a protocol error")
	var sc structured
	if r.IsError {
		return r, sc
	}
	require.Nil(t, r.StructuredContent, "%s: text only", name)
	for _, m := range taskLine.FindAllStringSubmatch(text(r), -1) {
		id, _ := strconv.Atoi(m[1])
		sc.Tasks = append(sc.Tasks, tasksessiond.Task{Taskid: id, Status: tasksessiond.Status(m[2] + m[3]), Subject: m[4]})
	}
	if len(sc.Tasks) > 0 {
		sc.Task = sc.Tasks[0]
	}
	return r, sc
}

// taskLine is a task as a result's text shows it: "#3 [pending] Subject"
// in a list or TaskGet, "#3 pending: Subject" after a write.
var taskLine = regexp.MustCompile(`(?m)^#([0-9]+) (?:\[([a-z]+)\]|([a-z]+):) (.*)$`)

func text(r *mcp.CallToolResult) string {
	var s strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s.WriteString(tc.Text)
		}
	}
	return s.String()
}

// proxy sits between the bridge and the daemon. Armed, it passes the next
// tools/call to the daemon, lets the daemon commit and answer, then drops
// the answer and the connection: the write happened, the bridge never
// heard. down and up make the daemon unreachable and reachable again.
type proxy struct {
	path, daemon string
	armed        atomic.Bool
	drops        atomic.Int32

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

func newProxy(t *testing.T, daemon string) *proxy {
	t.Helper()
	p := &proxy{path: testutil.SocketPath(t), daemon: daemon}
	p.up(t)
	t.Cleanup(p.down)
	return p
}

func (p *proxy) up(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("unix", p.path)
	require.NoError(t, err)
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			up, err := ln.Accept()
			if err != nil {
				return
			}
			down, err := net.Dial("unix", p.daemon)
			if err != nil {
				up.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, up, down)
			p.mu.Unlock()
			go p.pipe(up, down)
		}
	}()
}

// down refuses new connections and breaks the live ones, as a daemon
// killed with SIGKILL does.
func (p *proxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) pipe(up, down net.Conn) {
	defer up.Close()
	defer down.Close()
	var swallow atomic.Bool
	go func() {
		r := bufio.NewReader(down)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				up.Close()
				return
			}
			if swallow.Load() {
				p.drops.Add(1)
				up.Close()
				return
			}
			up.Write(line)
		}
	}()
	r := bufio.NewReader(up)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		if strings.Contains(string(line), `"tools/call"`) && p.armed.CompareAndSwap(true, false) {
			swallow.Store(true)
		}
		if _, err := down.Write(line); err != nil {
			return
		}
	}
}

func TestWriteRetriedAcrossReconnectAppliesOnce(t *testing.T) {
	// Ensures a write whose answer is lost with the connection is sent again
	// on a new connection with the same callId and answered from the log:
	// the task exists once, and the model sees a success.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	dc := d.Dial(t)
	_, err := dc.CreateSession(ctx, wire.CreateSession{SessionID: "s"})
	require.NoError(t, err)
	p := newProxy(t, d.Socket)
	cs, _ := serve(t, mcpbridge.Config{Socket: p.path, SessionID: "s", ReconnectWait: 5 * time.Second})
	textOnly(t, cs)

	p.armed.Store(true)
	r, sc := callTool(t, cs, "TaskCreate", map[string]any{"subject": "only once"})
	require.False(t, r.IsError, text(r))
	require.EqualValues(t, 1, p.drops.Load(), "the first answer was lost")
	assert.Equal(t, 1, sc.Task.Taskid)
	assert.Equal(t, "#1 pending: only once\n1 pending", text(r))

	got, err := dc.ResumeSession(ctx, "s")
	require.NoError(t, err)
	assert.Len(t, got.Tasks, 1, "the resent write was not applied again")
	_, sc = callTool(t, cs, "TaskCreate", map[string]any{"subject": "next"})
	assert.Equal(t, 2, sc.Task.Taskid)
}

func TestDaemonDownIsAToolError(t *testing.T) {
	// Ensures a call while the daemon is unreachable is an isError result
	// that says what to do (never a protocol error), that it changes
	// nothing, and that the same bridge serves again once the daemon is back.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	p := newProxy(t, d.Socket)
	cs, _ := serve(t, mcpbridge.Config{Socket: p.path, SessionID: "s", Create: true, ReconnectWait: 200 * time.Millisecond})
	textOnly(t, cs)
	_, sc := callTool(t, cs, "TaskCreate", map[string]any{"subject": "before"})
	require.Equal(t, 1, sc.Task.Taskid)

	p.down()
	for _, name := range []string{"TaskCreate", "TaskList"} {
		r, _ := callTool(t, cs, name, map[string]any{})
		require.True(t, r.IsError, name)
		assert.Contains(t, text(r), name+" was not done")
		assert.Contains(t, text(r), "daemon cannot be reached")
		assert.Contains(t, text(r), "tasksessiond serve")
	}

	p.up(t)
	r, sc := callTool(t, cs, "TaskList", nil)
	require.False(t, r.IsError, text(r))
	assert.Len(t, sc.Tasks, 1, "the call made while down changed nothing")
	_, sc = callTool(t, cs, "TaskCreate", map[string]any{"subject": "after"})
	assert.Equal(t, 2, sc.Task.Taskid)
}

func TestReadsFollowCompaction(t *testing.T) {
	// Ensures a bridge bound to a session that the host compacts reads the
	// successor: TaskList shows tasks created there, TaskGet finds them.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	dc := d.Dial(t)
	_, err := dc.CreateSession(ctx, wire.CreateSession{SessionID: "old"})
	require.NoError(t, err)
	cs, b := serve(t, mcpbridge.Config{Socket: d.Socket, SessionID: "old"})
	textOnly(t, cs)
	callTool(t, cs, "TaskCreate", map[string]any{"subject": "planned before"})

	_, err = dc.Compact(ctx, wire.Compact{SessionID: "old", NewSessionID: "new"})
	require.NoError(t, err)
	_, err = dc.CallTool(ctx, client.ToolCall{SessionID: "new", Name: "TaskCreate", Arguments: map[string]any{"subject": "made in the successor"}})
	require.NoError(t, err)

	r, sc := callTool(t, cs, "TaskList", nil)
	require.False(t, r.IsError, text(r))
	require.Len(t, sc.Tasks, 2)
	assert.Equal(t, "made in the successor", sc.Tasks[1].Subject)
	assert.Equal(t, "new", b.SessionID())
	r, sc = callTool(t, cs, "TaskGet", map[string]any{"taskid": 2})
	require.False(t, r.IsError, text(r))
	assert.Equal(t, "made in the successor", sc.Task.Subject)

	// A second compaction, then a write: it goes to the newest session.
	_, err = dc.Compact(ctx, wire.Compact{SessionID: "new", NewSessionID: "newer"})
	require.NoError(t, err)
	_, sc = callTool(t, cs, "TaskUpdate", map[string]any{"taskid": 1, "status": "completed"})
	assert.Equal(t, "completed", string(sc.Task.Status))
	assert.Equal(t, "newer", b.SessionID())

	// A bridge started on the old id serves the head from its first call.
	cs2, b2 := serve(t, mcpbridge.Config{Socket: d.Socket, SessionID: "old"})
	r, sc = callTool(t, cs2, "TaskList", nil)
	require.False(t, r.IsError, text(r))
	assert.Len(t, sc.Tasks, 2)
	assert.Equal(t, "newer", b2.SessionID())
}

func TestEmptyListAndCreateOnFirstUse(t *testing.T) {
	// Ensures a session bound by id (as CLAUDE_CODE_SESSION_ID binds it) is
	// created by the first call, not at start, and that an empty list says
	// so.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	dc := d.Dial(t)
	cs, _ := serve(t, mcpbridge.Config{Socket: d.Socket, SessionID: "claude-abc", Create: true})
	_, err := dc.GetSession(ctx, "claude-abc")
	require.ErrorIs(t, err, client.ErrSessionNotFound, "nothing is created before the first call")

	textOnly(t, cs)
	r, sc := callTool(t, cs, "TaskList", nil)
	require.False(t, r.IsError, text(r))
	assert.Empty(t, sc.Tasks)
	assert.Equal(t, "The task list is empty. Use TaskCreate to plan the work.", text(r))
	_, err = dc.GetSession(ctx, "claude-abc")
	require.NoError(t, err)
}

func TestToolsListedWithoutDaemon(t *testing.T) {
	// Ensures a bridge started before the daemon lists the four tools (the
	// host would otherwise go without them for its whole session), answers
	// a call with an error result while no daemon answers, and serves once
	// one does, on the same MCP session.
	sock := testutil.SocketPath(t)
	cs, _ := serve(t, mcpbridge.Config{Socket: sock, SessionID: "late", Create: true, ReconnectWait: 100 * time.Millisecond})
	textOnly(t, cs)
	r, _ := callTool(t, cs, "TaskList", nil)
	require.True(t, r.IsError)
	assert.Contains(t, text(r), "daemon cannot be reached")

	testutil.StartDaemonAt(t, testutil.MustOpenDB(t), sock)
	r, sc := callTool(t, cs, "TaskCreate", map[string]any{"subject": "after the daemon came"})
	require.False(t, r.IsError, text(r))
	assert.Equal(t, 1, sc.Task.Taskid)
}

func TestBridgeFollowsTheHostsConversation(t *testing.T) {
	// Ensures a bridge whose host changes conversation under it (Claude
	// Code's /clear or a fork, told by the hook through Bound) serves the
	// new conversation's list from the next call, created on first use,
	// and leaves the old list as it was for that conversation's resume.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	dc := d.Dial(t)
	var mu sync.Mutex
	bound := ""
	set := func(id string) { mu.Lock(); bound = id; mu.Unlock() }
	cs, b := serve(t, mcpbridge.Config{Socket: d.Socket, SessionID: "conv-1", Create: true,
		Bound: func() binding.Conversation { mu.Lock(); defer mu.Unlock(); return binding.Conversation{ID: bound} }})
	textOnly(t, cs)
	callTool(t, cs, "TaskCreate", map[string]any{"subject": "first conversation"})
	set("conv-1") // the startup hook names the same conversation: no change
	callTool(t, cs, "TaskCreate", map[string]any{"subject": "still the first"})
	assert.Equal(t, "conv-1", b.SessionID())

	set("conv-2") // /clear
	r, sc := callTool(t, cs, "TaskList", nil)
	require.False(t, r.IsError, text(r))
	assert.Empty(t, sc.Tasks, "a new conversation starts with an empty list")
	_, sc = callTool(t, cs, "TaskCreate", map[string]any{"subject": "second conversation"})
	assert.Equal(t, 1, sc.Task.Taskid)
	assert.Equal(t, "conv-2", b.SessionID())

	old, err := dc.ResumeSession(ctx, "conv-1")
	require.NoError(t, err)
	require.Len(t, old.Tasks, 2, "the first conversation keeps its own list")

	set("conv-1") // resuming the first conversation in the same process
	_, sc = callTool(t, cs, "TaskGet", map[string]any{"taskid": 2})
	assert.Equal(t, "still the first", sc.Task.Subject)
}

func TestToolsCarryAnnotations(t *testing.T) {
	// Ensures the MCP client sees titles and hints: reads are read-only, so
	// a host's plan mode may run them; no tool is destructive.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	cs, _ := serve(t, mcpbridge.Config{Socket: d.Socket})
	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	readOnly := map[string]bool{"TaskList": true, "TaskGet": true, "TaskCreate": false, "TaskUpdate": false}
	for _, tool := range list.Tools {
		require.NotNil(t, tool.Annotations, tool.Name)
		assert.NotEmpty(t, tool.Title, tool.Name)
		assert.Equal(t, readOnly[tool.Name], tool.Annotations.ReadOnlyHint, tool.Name)
		require.NotNil(t, tool.Annotations.DestructiveHint, tool.Name)
		assert.False(t, *tool.Annotations.DestructiveHint, tool.Name)
		assert.Nil(t, tool.OutputSchema, tool.Name)
	}
}

func TestBridgeRebuildsAForkFromItsTranscript(t *testing.T) {
	// Ensures a conversation the daemon does not know (a fork: a new id
	// over a copy of the history) starts, on the bridge's first call, with
	// the list its transcript's Task calls make, failed calls skipped, so
	// the ids go on from those the model saw.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	path := filepath.Join(t.TempDir(), "fork.jsonl")
	lines := []string{
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"u1","name":"mcp__tasks__TaskCreate","input":{"subject":"planned in the source"}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"u1","content":"ok"}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"u2","name":"mcp__tasks__TaskCreate","input":{}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"u2","is_error":true,"content":"Error"}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"u3","name":"mcp__other__TaskCreate","input":{"subject":"another server's tool of that name"}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"u3","content":"ok"}]}}`,
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	cs, _ := serve(t, mcpbridge.Config{Socket: d.Socket, SessionID: "fork", Create: true, Server: "tasks",
		Bound: func() binding.Conversation { return binding.Conversation{ID: "fork", Transcript: path} }, History: claudecode.Host{}})
	textOnly(t, cs)
	r, sc := callTool(t, cs, "TaskCreate", map[string]any{"subject": "made in the fork"})
	require.False(t, r.IsError, text(r))
	assert.Equal(t, 2, sc.Task.Taskid, "the ids go on from the history: its own calls, not another server's")
}

func TestBridgeBindsEachCallToItsMetaThread(t *testing.T) {
	// Ensures a bridge with no fixed session serves, for each call, the
	// conversation its _meta names (Codex CLI's threadId): one thread one
	// list, created on first use; another thread another list; the first
	// thread's list again when its calls come back (a resume).
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	cs, _ := serve(t, mcpbridge.Config{Socket: d.Socket, FollowMeta: true, Clients: clients})
	call := func(thread, name string, args map[string]any) *mcp.CallToolResult {
		if args == nil {
			args = map[string]any{}
		}
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: mcp.Meta{"threadId": thread, "sessionId": thread}, Name: name, Arguments: args})
		require.NoError(t, err)
		require.False(t, r.IsError, text(r))
		return r
	}
	call("thread-1", "TaskCreate", map[string]any{"subject": "one"})
	call("thread-1", "TaskCreate", map[string]any{"subject": "two"})
	assert.Contains(t, text(call("thread-2", "TaskCreate", map[string]any{"subject": "other"})), "#1 pending: other")
	assert.Contains(t, text(call("thread-1", "TaskCreate", map[string]any{"subject": "three"})), "#3 pending: three")
	dc := d.Dial(t)
	for id, n := range map[string]int{"thread-1": 3, "thread-2": 1} {
		got, err := dc.ResumeSession(ctx, id)
		require.NoError(t, err)
		assert.Len(t, got.Tasks, n, id)
	}
}

func TestConcurrentThreadsKeepTheirLists(t *testing.T) {
	// Ensures calls of two Codex threads in flight at once on one bridge
	// each land in their own thread's list (the bridge's rebinding for one
	// must not redirect the other's call in flight).
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	cs, _ := serve(t, mcpbridge.Config{Socket: d.Socket, FollowMeta: true, Clients: clients})
	var wg sync.WaitGroup
	for _, thread := range []string{"thread-1", "thread-2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				r, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: mcp.Meta{"threadId": thread}, Name: "TaskCreate",
					Arguments: map[string]any{"subject": fmt.Sprintf("%s %d", thread, i)}})
				assert.NoError(t, err)
				assert.False(t, r.IsError, text(r))
			}
		}()
	}
	wg.Wait()
	dc := d.Dial(t)
	for _, thread := range []string{"thread-1", "thread-2"} {
		got, err := dc.ResumeSession(ctx, thread)
		require.NoError(t, err)
		require.Len(t, got.Tasks, 40, thread)
		for _, task := range got.Tasks {
			assert.True(t, strings.HasPrefix(task.Subject, thread+" "), "%s holds %q", thread, task.Subject)
		}
	}
}

// structured holds the tasks a result's text names, for the assertions:
// the task a write or TaskGet shows, and a TaskList's tasks.
type structured struct {
	Task  tasksessiond.Task
	Tasks []tasksessiond.Task
}

func TestCodexTaskListFitsItsBudget(t *testing.T) {
	// Ensures a TaskList under Codex CLI (its MCP client's name), with a
	// fixed session as well as one named by _meta, is within Codex's
	// budget for a model outside its catalog (10,000 bytes of output),
	// every open task named; another client gets the daemon's own.
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	dc := d.Dial(t)
	_, err := dc.CreateSession(ctx, wire.CreateSession{SessionID: "big", Title: "big"})
	require.NoError(t, err)
	for i := 1; i <= 300; i++ {
		_, err := dc.CallTool(ctx, client.ToolCall{SessionID: "big", Name: "TaskCreate", Arguments: map[string]any{"subject": fmt.Sprintf("Task %03d", i), "description": strings.Repeat("d", 500)}})
		require.NoError(t, err)
		if i <= 100 {
			_, err = dc.CallTool(ctx, client.ToolCall{SessionID: "big", Name: "TaskUpdate", Arguments: map[string]any{"taskid": i, "status": "completed"}})
			require.NoError(t, err)
		}
	}
	size := func(name string, cfg mcpbridge.Config, meta mcp.Meta, brief bool) int {
		b, err := mcpbridge.New(cfg)
		require.NoError(t, err)
		ct, st := mcp.NewInMemoryTransports()
		runCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		go b.Run(runCtx, st)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(ctx, ct, nil)
		require.NoError(t, err)
		defer cs.Close()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: "TaskList", Arguments: map[string]any{}})
		require.NoError(t, err)
		require.False(t, r.IsError, text(r))
		out := text(r)
		for i := 101; i <= 300 && brief; i++ {
			assert.Contains(t, out, fmt.Sprintf("#%d [pending] Task %03d", i, i), "%s: open task #%d", name, i)
		}
		return len(out)
	}
	assert.LessOrEqual(t, size("codex-mcp-client", mcpbridge.Config{Socket: d.Socket, SessionID: "big", Clients: clients}, nil, true), codex.ResultBytes)
	assert.LessOrEqual(t, size("some-host", mcpbridge.Config{Socket: d.Socket, FollowMeta: true, Clients: clients}, mcp.Meta{"threadId": "big"}, true), codex.ResultBytes)
	assert.Greater(t, size("some-host", mcpbridge.Config{Socket: d.Socket, SessionID: "big", Clients: clients}, nil, false), codex.ResultBytes)
}
