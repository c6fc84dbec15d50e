package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/cli"
	"github.com/tasksessiond/tasksessiond/internal/server"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestMarkdown(t *testing.T) {
	got := cli.Markdown(tasksessiond.Session{ID: "s", Title: "Refactor"}, []tasksessiond.Task{
		{Taskid: 1, Status: "completed", Subject: "Read the code"},
		{Taskid: 2, Status: "inprogress", Subject: "Split the parser", Description: "lexer first\nthen the rest"},
		{Taskid: 3, Status: "pending", Subject: "Write tests"},
		{Taskid: 4, Status: "deleted", Subject: "Rewrite in Rust"},
	})
	assert.Equal(t, "# Refactor\n\n"+
		"- [x] #1 Read the code\n"+
		"- [ ] #2 Split the parser (in progress)\n  lexer first\n  then the rest\n"+
		"- [ ] #3 Write tests\n"+
		"- [ ] #4 ~~Rewrite in Rust~~ (deleted)\n", got)
	assert.Equal(t, "# Session x\n\n_No tasks._\n", cli.Markdown(tasksessiond.Session{ID: "x"}, nil))
}

func TestParseArgs(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	j := fs.Bool("json", false, "")
	n := fs.Int("n", 0, "")
	pos, err := cli.ParseArgs(fs, []string{"a", "--json", "b", "-n", "3", "--", "-c"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "-c"}, pos)
	assert.True(t, *j)
	assert.Equal(t, 3, *n)
}

func TestLineageOrder(t *testing.T) {
	// Ensures lineage lists a chain oldest first whichever generation it is
	// asked from.
	ctx := context.Background()
	dm := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	c := dm.Dial(t)
	_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: "g1"})
	require.NoError(t, err)
	_, err = c.Compact(ctx, wire.Compact{SessionID: "g1", NewSessionID: "g2"})
	require.NoError(t, err)
	_, err = c.Compact(ctx, wire.Compact{SessionID: "g2", NewSessionID: "g3"})
	require.NoError(t, err)

	for _, from := range []string{"g1", "g2", "g3"} {
		var out bytes.Buffer
		code := cli.Lookup("lineage").Run(ctx, &cli.Env{Stdout: &out, Stderr: io.Discard}, []string{"--socket", dm.Socket, "--json", from})
		require.Equal(t, 0, code)
		var chain []tasksessiond.Session
		require.NoError(t, json.Unmarshal(out.Bytes(), &chain))
		var ids []string
		for _, s := range chain {
			ids = append(ids, s.ID)
		}
		assert.Equal(t, []string{"g1", "g2", "g3"}, ids, "from %s", from)
	}
}

func TestReadsFollowCompaction(t *testing.T) {
	// Ensures tasks, export, watch, call and snapshot given a compacted
	// session's id act on the newest session of its lineage, and say so on
	// stderr; --no-follow shows the sealed list.
	ctx := context.Background()
	dm := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	c := dm.Dial(t)
	_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: "g1"})
	require.NoError(t, err)
	_, err = c.Compact(ctx, wire.Compact{SessionID: "g1", NewSessionID: "g2"})
	require.NoError(t, err)
	_, err = c.CallTool(ctx, client.ToolCall{SessionID: "g2", Name: "TaskCreate", Arguments: map[string]any{"subject": "made after compaction"}})
	require.NoError(t, err)

	run := func(args ...string) (string, string) {
		var out, errOut bytes.Buffer
		code := cli.Lookup(args[0]).Run(ctx, &cli.Env{Stdout: &out, Stderr: &errOut}, append([]string{"--socket", dm.Socket}, args[1:]...))
		require.Equal(t, 0, code, errOut.String())
		return out.String(), errOut.String()
	}
	out, note := run("tasks", "g1")
	assert.Contains(t, out, "made after compaction")
	assert.Contains(t, note, "session g1 was compacted; showing the newest of its lineage, g2")
	out, _ = run("tasks", "g1", "--no-follow")
	assert.Contains(t, out, "Session g1 has no tasks yet.")
	out, note = run("export", "g1", "--format", "markdown")
	assert.Contains(t, out, "- [ ] #1 made after compaction")
	assert.Contains(t, note, "showing the newest of its lineage, g2")
	out, note = run("tasks", "g2")
	assert.Contains(t, out, "made after compaction")
	assert.Empty(t, note, "an active session needs no note")
	out, note = run("call", "g1", "TaskList")
	assert.Contains(t, out, "made after compaction", "call reads the newest list, not the sealed one")
	assert.Contains(t, note, "showing the newest of its lineage, g2")
	out, _ = run("call", "g1", "TaskCreate", `{"subject":"written through the old id"}`)
	assert.Contains(t, out, "#2 pending:")
	out, _ = run("snapshot", "g1")
	assert.Contains(t, out, "the next TaskCreate gets #3", "snapshot names the lineage's next id")
	out, _ = run("snapshot", "g1", "--no-follow")
	assert.Contains(t, out, "the next TaskCreate gets #1")

	wctx, cancel := context.WithCancel(ctx)
	var wout, werr testutil.SyncBuffer
	done := make(chan int)
	go func() {
		done <- cli.Lookup("watch").Run(wctx, &cli.Env{Stdout: &wout, Stderr: &werr}, []string{"--socket", dm.Socket, "g1"})
	}()
	require.Eventually(t, func() bool { return strings.Contains(wout.String(), "made after compaction") }, 10*time.Second, 10*time.Millisecond)
	assert.Contains(t, wout.String(), "session g2")
	cancel()
	assert.Equal(t, 0, <-done)
}

func TestWatchEndsWhenTheDaemonGoes(t *testing.T) {
	// Ensures watch does not hang when the daemon stops: it ends with an
	// error that says so.
	ctx := context.Background()
	dm := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	c := dm.Dial(t)
	_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: "w"})
	require.NoError(t, err)
	var out, errOut testutil.SyncBuffer
	done := make(chan int)
	go func() {
		done <- cli.Lookup("watch").Run(ctx, &cli.Env{Stdout: &out, Stderr: &errOut}, []string{"--socket", dm.Socket, "w"})
	}()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "session w") }, 10*time.Second, 10*time.Millisecond)
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, dm.Srv.Shutdown(sctx))
	select {
	case code := <-done:
		assert.Equal(t, 1, code)
		assert.Contains(t, errOut.String(), "stopped watching session w")
		assert.Contains(t, errOut.String(), "is the daemon still running?")
	case <-time.After(10 * time.Second):
		t.Fatal("watch hung after the daemon stopped")
	}
}

func TestCommandsTimeOut(t *testing.T) {
	// Ensures a command against a daemon that takes the connection but
	// never answers (stopped with SIGSTOP, or wedged) gives up after
	// --timeout with a message that says so, instead of hanging forever.
	sock := testutil.SocketPath(t)
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() }) // held open, never answered
		}
	}()
	for _, name := range []string{"status", "sessions", "tasks"} {
		var stderr bytes.Buffer
		args := []string{"--socket", sock, "--timeout", "200ms"}
		if name == "tasks" {
			args = append(args, "some-session")
		}
		start := time.Now()
		code := cli.Lookup(name).Run(context.Background(), &cli.Env{Stdout: io.Discard, Stderr: &stderr}, args)
		assert.Equal(t, 1, code, name)
		assert.Contains(t, stderr.String(), "did not answer within 200ms", name)
		assert.Less(t, time.Since(start), 10*time.Second, name)
	}
}

func TestWatchNeverLosesACompaction(t *testing.T) {
	// Ensures a watch that falls behind (the daemon drops it with
	// watchLagged once one change does not fit its buffer, here of 1)
	// catches up by itself and still follows a compaction made meanwhile:
	// it ends on the successor's list, not frozen on the sealed one.
	ctx := context.Background()
	dm := testutil.StartDaemon(t, testutil.MustOpenDB(t), func(c *server.Config) { c.WatchBuffer = 1 })
	c := dm.Dial(t)
	_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: "g1"})
	require.NoError(t, err)

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wout, werr testutil.SyncBuffer
	done := make(chan int)
	go func() {
		done <- cli.Lookup("watch").Run(wctx, &cli.Env{Stdout: &wout, Stderr: &werr}, []string{"--socket", dm.Socket, "g1"})
	}()
	require.Eventually(t, func() bool { return strings.Contains(wout.String(), "session g1") }, 10*time.Second, 10*time.Millisecond)

	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				c.CallTool(ctx, client.ToolCall{SessionID: "g1", Name: "TaskCreate", Arguments: map[string]any{"subject": fmt.Sprintf("burst %d-%d", w, i)}})
			}
		}()
	}
	wg.Wait()
	_, err = c.Compact(ctx, wire.Compact{SessionID: "g1", NewSessionID: "g2"})
	require.NoError(t, err)
	_, err = c.CallTool(ctx, client.ToolCall{SessionID: "g2", Name: "TaskCreate", Arguments: map[string]any{"subject": "after the lag"}})
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		out := wout.String()
		return strings.Contains(out, "after the lag") && strings.Contains(out, "session g2")
	}, 10*time.Second, 20*time.Millisecond, "the watch follows the lineage: %s", werr.String())
	cancel()
	assert.Equal(t, 0, <-done)
}

func TestWatchJSONNeverLosesAChange(t *testing.T) {
	// Ensures watch --json prints every committed change once and in
	// order, across compactions (the successor's first changes, made
	// before the watch could follow it, included) and across lags (the
	// daemon drops a watch one change behind its buffer, here of 4): what
	// it could not print as events it prints as a "resync" line holding
	// the whole list, and no event repeats one that list already holds.
	ctx := context.Background()
	dm := testutil.StartDaemon(t, testutil.MustOpenDB(t), func(c *server.Config) { c.WatchBuffer = 4 })
	c := dm.Dial(t)
	_, err := c.CreateSession(ctx, wire.CreateSession{SessionID: "j1"})
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wout, werr testutil.SyncBuffer
	done := make(chan int)
	go func() {
		done <- cli.Lookup("watch").Run(wctx, &cli.Env{Stdout: &wout, Stderr: &werr}, []string{"--socket", dm.Socket, "--json", "j1"})
	}()
	require.Eventually(t, func() bool { return dm.Srv.Watching() == 1 }, 10*time.Second, time.Millisecond)

	var subjects []string
	create := func(session, subject string) {
		_, err := c.CallTool(ctx, client.ToolCall{SessionID: session, Name: "TaskCreate", Arguments: map[string]any{"subject": subject}})
		require.NoError(t, err)
		subjects = append(subjects, subject)
	}
	for i := range 10 {
		create("j1", fmt.Sprintf("j1 %d", i))
	}
	_, err = c.Compact(ctx, wire.Compact{SessionID: "j1", NewSessionID: "j2"})
	require.NoError(t, err)
	for i := range 3 {
		create("j2", fmt.Sprintf("j2 first %d", i))
	}
	// A burst from several connections: the watch falls behind.
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 4 {
		wc := dm.Dial(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 150 {
				s := fmt.Sprintf("j2 burst %d-%d", w, i)
				_, err := wc.CallTool(ctx, client.ToolCall{SessionID: "j2", Name: "TaskCreate", Arguments: map[string]any{"subject": s}})
				assert.NoError(t, err)
				mu.Lock()
				subjects = append(subjects, s)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	_, err = c.Compact(ctx, wire.Compact{SessionID: "j2", NewSessionID: "j3"})
	require.NoError(t, err)
	create("j3", "the last")
	require.Eventually(t, func() bool { return strings.Contains(wout.String(), `"the last"`) }, 20*time.Second, 10*time.Millisecond,
		"the watch printed the last change: %s", werr.String())
	cancel()
	assert.Equal(t, 0, <-done)

	type line struct {
		Method    string              `json:"method"`
		SessionID string              `json:"sessionId"`
		Seq       int64               `json:"seq"`
		LastSeq   int64               `json:"lastSeq"`
		Task      *tasksessiond.Task  `json:"task"`
		Tasks     []tasksessiond.Task `json:"tasks"`
	}
	shown := map[string]bool{}
	order := map[string]int{"j1": 1, "j2": 2, "j3": 3}
	session, last, resyncs := "j1", int64(0), 0
	for _, l := range strings.Split(strings.TrimSpace(wout.String()), "\n") {
		var ln line
		require.NoError(t, json.Unmarshal([]byte(l), &ln), l)
		require.GreaterOrEqual(t, order[ln.SessionID], order[session], "sessions in lineage order: %s", l)
		if ln.SessionID != session {
			session, last = ln.SessionID, 0
		}
		switch ln.Method {
		case "resync":
			resyncs++
			for _, task := range ln.Tasks {
				shown[task.Subject] = true
			}
			last = max(last, ln.LastSeq)
		case client.NotifyTasksChanged:
			require.Greater(t, ln.Seq, last, "each change once, in order: %s", l)
			last = ln.Seq
			shown[ln.Task.Subject] = true
		}
	}
	for _, s := range subjects {
		assert.True(t, shown[s], "change %q was printed, as an event or in a resync's list", s)
	}
	t.Logf("%d resyncs", resyncs)
}
