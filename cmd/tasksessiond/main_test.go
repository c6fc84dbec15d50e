package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	main "github.com/tasksessiond/tasksessiond/cmd/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/pgtest"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

var binary string

func TestMain(m *testing.M) {
	testutil.ImpostorMain()
	dir, err := os.MkdirTemp("", "tsd-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "tasksessiond")
	// The tests start their daemons themselves; the ones about autostart
	// turn it back on.
	os.Setenv("TASKSESSIOND_AUTOSTART", "0")
	// The race detector sleeps a second at every exit of a -race binary;
	// the children these tests start and stop by the hundred need not.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	if out, err := exec.Command("go", "build", "-race", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	if fleetPG.srv != nil {
		fleetPG.srv.Close()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// fleetPG is the PostgreSQL server the fleet tests share, each in a
// database of its own: started by the first that asks (initdb takes some
// seconds), stopped when the tests end.
var fleetPG struct {
	once sync.Once
	srv  *pgtest.Server
	err  error
}

// fleetServer returns the shared server, skipping the test when there is
// none (failing it when pgtest.EnvRequired is set), as pgtest.StartFor.
func fleetServer(t *testing.T) *pgtest.Server {
	t.Helper()
	fleetPG.once.Do(func() { fleetPG.srv, fleetPG.err = pgtest.Start(pgtest.Options{}) })
	if fleetPG.err != nil {
		if os.Getenv(pgtest.EnvRequired) == "1" {
			t.Fatalf("PostgreSQL is required (%s=1) but cannot be had: %v", pgtest.EnvRequired, fleetPG.err)
		}
		t.Skipf("skipping: no PostgreSQL to test against: %v", fleetPG.err)
	}
	return fleetPG.srv
}

// proc is the daemon binary running as a child process.
type proc struct {
	cmd    *exec.Cmd
	socket string
	stderr *bytes.Buffer
}

// startDaemon starts serve on dbPath and waits until it answers on socket.
// A database file that does not exist yet is testutil.FreshDB's copy, not
// migrated by the child (some 0.6 s of CPU under -race): a daemon that
// creates its database is the crash harness's and the autostart tests'.
func startDaemon(t *testing.T, dbPath, socket string, extra ...string) *proc {
	t.Helper()
	if _, err := os.Stat(dbPath); os.IsNotExist(err) && !strings.Contains(dbPath, "://") {
		testutil.FreshDB(t, dbPath)
	}
	args := append([]string{"serve", "--db", dbPath, "--socket", socket}, extra...)
	cmd := exec.Command(binary, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	p := &proc{cmd: cmd, socket: socket, stderr: &stderr}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := client.Dial(context.Background(), socket)
		if err == nil {
			c.Close()
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon did not start: %v\n%s", err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // polling for start-up, not for shutdown
	}
}

func (p *proc) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	p.cmd.Wait()
}

// cli runs a command in this process, as main would, against the daemon
// on socket; only the tests that kill or start a daemon exec the binary.
func cli(t *testing.T, socket string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	t.Setenv("TASKSESSIOND_SOCKET", socket)
	var o, e bytes.Buffer
	code = main.Run(context.Background(), args, strings.NewReader(""), &o, &e)
	return o.String(), e.String(), code
}

func TestKillAndRestart(t *testing.T) {
	// Ensures a session of calls survives SIGKILL: after a restart on the
	// same database, sessions/resume and TaskList give back the same tasks
	// and the next TaskCreate gets the next id.
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "e2e.db")
	sock := testutil.SocketPath(t)
	p := startDaemon(t, dbPath, sock)

	c := testutil.DialSocket(t, sock)
	s, err := c.CreateSession(ctx, wire.CreateSession{Title: "e2e"})
	require.NoError(t, err)
	for i := 1; i <= 5; i++ {
		r, err := c.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": fmt.Sprintf("step %d", i)}, CallID: fmt.Sprintf("call-%d", i)})
		require.NoError(t, err)
		require.Equal(t, i, must(r.Written()).Task.Taskid)
	}
	_, err = c.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskUpdate", Arguments: `{"taskid":2,"status":"completed"}`})
	require.NoError(t, err)
	_, err = c.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskUpdate", Arguments: map[string]any{"taskid": "#3", "status": "deleted"}})
	require.NoError(t, err)
	bad, err := c.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskUpdate", Arguments: map[string]any{"taskid": 99, "status": "completed"}})
	require.NoError(t, err)
	require.True(t, bad.IsError)
	before, err := c.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskList"})
	require.NoError(t, err)

	p.kill(t)
	startDaemon(t, dbPath, sock)
	c2 := testutil.DialSocket(t, sock)

	resumed, err := c2.ResumeSession(ctx, s.ID)
	require.NoError(t, err)
	assert.ElementsMatch(t, must(before.Listing()).Tasks, resumed.Tasks)
	assert.Equal(t, 6, resumed.NextTaskid)
	// The restarted daemon replays the whole log.
	assert.LessOrEqual(t, resumed.Replay.Applied, 7)
	assert.LessOrEqual(t, resumed.Replay.SkippedErrors, 1)
	assert.Zero(t, resumed.Replay.Divergent)

	after, err := c2.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskList"})
	require.NoError(t, err)
	assert.Equal(t, must(before.Listing()).Tasks, must(after.Listing()).Tasks)
	assert.Equal(t, before.Text(), after.Text())

	// A retry of a call acknowledged before the kill applies nothing.
	retry, err := c2.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": "step 5"}, CallID: "call-5"})
	require.NoError(t, err)
	assert.Equal(t, 5, must(retry.Written()).Task.Taskid)

	next, err := c2.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": "after restart"}})
	require.NoError(t, err)
	assert.Equal(t, 6, must(next.Written()).Task.Taskid)
}

func TestFirstCallAfterRestartJustWorks(t *testing.T) {
	// Ensures a host's next tools/call after a daemon crash is served without
	// an explicit resume: the session is replayed on first use.
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "e2e.db")
	sock := testutil.SocketPath(t)
	p := startDaemon(t, dbPath, sock, "--sync", "normal")
	c := testutil.DialSocket(t, sock)
	s, err := c.CreateSession(ctx, wire.CreateSession{SessionID: "host-1"})
	require.NoError(t, err)
	_, err = c.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": "a"}})
	require.NoError(t, err)
	p.kill(t)

	startDaemon(t, dbPath, sock)
	c2 := testutil.DialSocket(t, sock)
	r, err := c2.CallTool(ctx, client.ToolCall{SessionID: "host-1", Name: "TaskCreate", Arguments: map[string]any{"subject": "b"}})
	require.NoError(t, err)
	assert.Equal(t, 2, must(r.Written()).Task.Taskid)
}

func TestSIGTERMStopsCleanly(t *testing.T) {
	// Ensures SIGTERM exits 0, removes the socket, and leaves the data.
	dbPath := filepath.Join(t.TempDir(), "e2e.db")
	sock := testutil.SocketPath(t)
	p := startDaemon(t, dbPath, sock)
	_, _, code := cli(t, sock, "new", "--id", "keep")
	require.Equal(t, 0, code)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	err := p.cmd.Wait()
	require.NoError(t, err, p.stderr.String())
	_, err = os.Lstat(sock)
	assert.True(t, os.IsNotExist(err), "socket removed")
	assert.Contains(t, p.stderr.String(), "stopped")

	startDaemon(t, dbPath, sock)
	out, _, code := cli(t, sock, "sessions", "--json")
	require.Equal(t, 0, code)
	assert.Contains(t, out, `"id": "keep"`)
}

func TestRefusesSecondDaemon(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "e2e.db")
	sock := testutil.SocketPath(t)
	startDaemon(t, dbPath, sock)
	other := filepath.Join(t.TempDir(), "other.db")
	cmd := exec.Command(binary, "serve", "--db", other, "--socket", sock)
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "socket in use")
	_, err = os.Stat(other)
	assert.ErrorIs(t, err, os.ErrNotExist, "the refused daemon created no database")
}

func TestRefusesForeignDatabase(t *testing.T) {
	// Ensures serve on an SQLite file another program made refuses it and
	// leaves it byte for byte as it was (no WAL switch, no tables added).
	path := filepath.Join(t.TempDir(), "notes.db")
	raw := testutil.RawDB(t, path)
	_, err := raw.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('mine')`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	out, err := exec.Command(binary, "serve", "--db", path, "--socket", testutil.SocketPath(t)).CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "is a SQLite database made by another program (it holds notes)")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after)
	for _, suffix := range []string{"-wal", "-shm"} {
		_, err = os.Stat(path + suffix)
		assert.ErrorIs(t, err, os.ErrNotExist, suffix)
	}
}

func TestCLI(t *testing.T) {
	// Ensures the people-facing commands work against a running daemon.
	dbPath := filepath.Join(t.TempDir(), "e2e.db")
	sock := testutil.SocketPath(t)
	startDaemon(t, dbPath, sock)

	id, _, code := cli(t, sock, "new", "--title", "walk-through")
	require.Equal(t, 0, code)
	id = strings.TrimSpace(id)
	require.NotEmpty(t, id)

	out, _, code := cli(t, sock, "call", id, "TaskCreate", `{"subject":"Read the README"}`)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "#1 pending: Read the README\n1 pending")

	out, _, code = cli(t, sock, "call", id, "TaskUpdate", `{"taskid":1,"status":"in_progress"}`, "--json")
	require.Equal(t, 0, code)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, false, res["isError"])

	out, errOut, code := cli(t, sock, "call", id, "TaskGet", `{"taskid":7}`)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "no task has taskid 7")
	assert.Contains(t, errOut, "the tool reported an error")

	_, errOut, code = cli(t, sock, "call", id, "TaskCreate", `{subject}`)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "not valid JSON")

	out, _, code = cli(t, sock, "tasks", id)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "1   inprogress  Read the README")

	out, _, code = cli(t, sock, "tasks", id, "--json")
	require.Equal(t, 0, code)
	var tasks []tasksessiond.Task
	require.NoError(t, json.Unmarshal([]byte(out), &tasks))
	assert.Equal(t, []tasksessiond.Task{{Taskid: 1, Status: "inprogress", Subject: "Read the README"}}, tasks)

	out, _, code = cli(t, sock, "sessions")
	require.Equal(t, 0, code)
	assert.Contains(t, out, id)
	assert.Contains(t, out, "walk-through")

	out, _, code = cli(t, sock, "status")
	require.Equal(t, 0, code)
	assert.Contains(t, out, dbPath)

	_, errOut, code = cli(t, sock, "tasks", "ghost")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `session "ghost" not found`)

	_, errOut, code = cli(t, sock, "tasks")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "Usage: tasksessiond tasks")
}

func TestCLIWithoutDaemon(t *testing.T) {
	_, errOut, code := cli(t, filepath.Join(t.TempDir(), "none.sock"), "status")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "is the daemon running? start it with `tasksessiond serve`")
}

func TestHelp(t *testing.T) {
	out, _, code := cli(t, "", "help")
	require.Equal(t, 0, code)
	for _, cmd := range []string{"serve", "status", "sessions", "new", "tasks", "call"} {
		assert.Contains(t, out, "  "+cmd)
	}
	helpOut, _, code := cli(t, "", "serve", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, helpOut, "-sync string")
	assert.Contains(t, helpOut, `(default "full")`)
	_, errOut, code := cli(t, "", "serve", "--sync", "fast")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `sync must be "full" or "normal"`)
	_, errOut, code = cli(t, "", "frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `unknown command "frobnicate"`)
}

func TestFsck(t *testing.T) {
	// Ensures fsck exits 0 on a sound database; and that what is derived
	// from the log, damaged while the daemon is stopped (a row's change
	// columns edited, the tasks index gone stale), changes no answer and
	// no id: the daemon loads the session by replaying the log, and says
	// in its log where the columns disagree; fsck names the damage,
	// --repair is refused beside the daemon and rebuilds it once it has
	// stopped.
	dbPath := filepath.Join(t.TempDir(), "f.db")
	sock := testutil.SocketPath(t)
	p := startDaemon(t, dbPath, sock)
	_, _, code := cli(t, sock, "new", "--id", "f")
	require.Equal(t, 0, code)
	for _, args := range []string{`{"subject":"a"}`, `{"subject":"b"}`} {
		_, _, code = cli(t, sock, "call", "f", "TaskCreate", args)
		require.Equal(t, 0, code)
	}
	_, _, code = cli(t, sock, "call", "f", "TaskUpdate", `{"taskid":1,"status":"completed"}`)
	require.Equal(t, 0, code)
	want, _, code := cli(t, sock, "tasks", "f")
	require.Equal(t, 0, code)

	out, _, code := cli(t, sock, "fsck", "--db", dbPath)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "1 sessions, 3 logged calls checked: 0 problems")

	stop := func(p *proc) {
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
		require.NoError(t, p.cmd.Wait(), p.stderr.String())
	}
	stop(p)
	raw := testutil.RawDB(t, dbPath)
	for _, q := range []string{
		`UPDATE tool_calls SET subject = 'tampered', status = 'deleted' WHERE session_id = 'f' AND seq = 2`,
		`UPDATE tool_calls SET status = 'pending' WHERE session_id = 'f' AND seq = 3`,
	} {
		_, err := raw.Exec(q)
		require.NoError(t, err)
	}
	require.NoError(t, raw.Close())

	p = startDaemon(t, dbPath, sock)
	got, _, code := cli(t, sock, "tasks", "f")
	require.Equal(t, 0, code)
	assert.Equal(t, want, got, "the same list, replayed from the calls' arguments")
	out, _, code = cli(t, sock, "call", "f", "TaskCreate", `{"subject":"c"}`)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "#3", "the next id")
	out, _, code = cli(t, sock, "fsck", "f", "--db", dbPath)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "session f: replay diverges at seq 2: TaskCreate recorded task 2 deleted")
	assert.Contains(t, out, "session f: the tasks view has")
	_, errOut, code := cli(t, sock, "fsck", "--repair", "--db", dbPath)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "stop the daemon first")
	stop(p)
	assert.Contains(t, p.stderr.String(), "replay diverged", "the daemon said so when it loaded the session")

	out, _, code = cli(t, sock, "fsck", "--repair", "--db", dbPath)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "rewrote the change columns of 2 rows")
	assert.Contains(t, out, "after: 1 sessions, 4 logged calls checked: 0 problems")

	// A mistyped path is an error, and nothing is created there.
	typo := filepath.Join(t.TempDir(), "typo.db")
	_, errOut, code = cli(t, sock, "fsck", "--db", typo)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no database to check at "+typo)
	_, err := os.Stat(typo)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestWatchAndExport(t *testing.T) {
	// Ensures `watch` redraws after each change and follows compaction, and
	// `export` prints a Markdown checklist and JSON.
	dbPath := filepath.Join(t.TempDir(), "w.db")
	sock := testutil.SocketPath(t)
	startDaemon(t, dbPath, sock)
	_, _, code := cli(t, sock, "new", "--id", "w1", "--title", "Watched")
	require.Equal(t, 0, code)

	cmd := exec.Command(binary, "watch", "w1")
	cmd.Env = append(os.Environ(), "TASKSESSIOND_SOCKET="+sock)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	waitFor := func(want string) {
		t.Helper()
		timeout := time.After(15 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				require.True(t, ok, "watch exited before showing %q", want)
				if strings.Contains(l, want) {
					return
				}
			case <-timeout:
				t.Fatalf("watch never showed %q", want)
			}
		}
	}
	waitFor("session w1")
	_, _, code = cli(t, sock, "call", "w1", "TaskCreate", `{"subject":"watch me"}`)
	require.Equal(t, 0, code)
	waitFor("create #1 [pending] watch me")
	_, _, code = cli(t, sock, "compact", "w1", "--new-id", "w2")
	require.Equal(t, 0, code)
	waitFor("following its successor w2")
	_, _, code = cli(t, sock, "call", "w2", "TaskUpdate", `{"taskid":1,"status":"completed"}`)
	require.Equal(t, 0, code)
	waitFor("update #1 [completed] watch me")

	out, _, code := cli(t, sock, "export", "w2", "--format", "markdown")
	require.Equal(t, 0, code)
	assert.Equal(t, "# Watched\n\n- [x] #1 watch me\n", out)
	out, _, code = cli(t, sock, "export", "w2", "--format", "json")
	require.Equal(t, 0, code)
	assert.Contains(t, out, `"nextTaskid": 2`)
	_, errOut, code := cli(t, sock, "export", "w2", "--format", "csv")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "--format must be markdown or json")
}

func TestCompletion(t *testing.T) {
	out, _, code := cli(t, "", "completion", "bash")
	require.Equal(t, 0, code)
	for _, name := range []string{"serve", "mcp", "watch", "export", "compact", "fsck"} {
		assert.Regexp(t, `[" ]`+name+`[" ]`, out)
	}
	script := filepath.Join(t.TempDir(), "c.bash")
	require.NoError(t, os.WriteFile(script, []byte(out), 0o600))
	if bash, err := exec.LookPath("bash"); err == nil {
		res, err := exec.Command(bash, "-n", script).CombinedOutput()
		assert.NoError(t, err, string(res))
	}
	_, _, code = cli(t, "", "completion", "fish")
	assert.Equal(t, 2, code)
}

func TestEveryCommandHasHelp(t *testing.T) {
	// Ensures each subcommand of the one command table answers --help with
	// its usage and examples, on standard output (asked-for help is the
	// answer), exit 0, and that help lists every one.
	all, _, code := cli(t, "", "help")
	require.Equal(t, 0, code)
	for _, name := range main.CommandNames() {
		assert.Regexp(t, `(?m)^  `+name+` `, all, "help lists %s", name)
		if name == "help" {
			continue
		}
		out, errOut, code := cli(t, "", name, "--help")
		assert.Equal(t, 0, code, name)
		assert.Contains(t, out, "Usage: tasksessiond "+name, name)
		assert.Contains(t, out, "Example", name)
		assert.Empty(t, errOut, name)
		// The npm package and the archives ship no docs/: help names a
		// document by its published address.
		assert.NotRegexp(t, `(^|[^/])docs/[A-Z]+\.md`, out, "%s --help names a docs/ path the npm package lacks", name)
	}
}

// TestStatusNamesTheVersion ensures status names the version the version
// command prints, "devel" for a binary go build made (as this test's is).
func TestStatusNamesTheVersion(t *testing.T) {
	sock := testutil.SocketPath(t)
	startDaemon(t, filepath.Join(t.TempDir(), "v.db"), sock)
	out, _, code := cli(t, "", "version", "--json")
	require.Equal(t, 0, code)
	var v struct{ Version string }
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.Equal(t, "devel", v.Version)
	out, _, code = cli(t, sock, "status", "--json")
	require.Equal(t, 0, code)
	var st struct{ Version string }
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	assert.Equal(t, v.Version, st.Version)
	out, _, code = cli(t, sock, "status")
	require.Equal(t, 0, code)
	assert.Regexp(t, `(?m)^version\s+devel$`, out)
}

func TestSecondDaemonRefused(t *testing.T) {
	// Ensures a second daemon on the same database file is refused,
	// whatever path names the file (a symlink, a hard link), naming the
	// daemon that holds it, and that it touches no file beside it.
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "one.db")
	d := startDaemon(t, dbPath, testutil.SocketPath(t))
	require.NoError(t, os.Symlink(dbPath, filepath.Join(dir, "link.db")))
	require.NoError(t, os.Link(dbPath, filepath.Join(dir, "hard.db")))
	for _, name := range []string{"one.db", "link.db", "hard.db"} {
		cmd := exec.Command(binary, "serve", "--db", filepath.Join(dir, name), "--socket", testutil.SocketPath(t))
		out, err := cmd.CombinedOutput()
		require.Error(t, err, name)
		assert.Contains(t, string(out), fmt.Sprintf("open for writing by another process (pid %d)", d.cmd.Process.Pid), name)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".lock", "no lock file is made")
	}
}

func TestBinaryHoldsNoTestRigs(t *testing.T) {
	// Ensures the product binary links no benchmark, crash harness or test
	// helper: they live in their own commands (cmd/tsdbench,
	// cmd/crashtest) and in tests.
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain to list the binary's packages")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	require.NoError(t, err)
	for _, rig := range []string{"internal/bench", "internal/crashtest", "internal/testutil", "e2e/"} {
		assert.NotContains(t, string(out), "tasksessiond/"+rig)
	}
}

// must returns v, panicking on err: a test's decoding of a result it made.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestADeletedDatabaseTakesNoWrites(t *testing.T) {
	// Ensures a database file deleted under a running daemon is noticed:
	// the next write is refused with a clear error instead of being
	// acknowledged into the unlinked file, status says so, and so does
	// the daemon's log.
	dbPath := filepath.Join(t.TempDir(), "gone.db")
	sock := testutil.SocketPath(t)
	p := startDaemon(t, dbPath, sock)
	_, _, code := cli(t, sock, "new", "--id", "g")
	require.Equal(t, 0, code)
	_, _, code = cli(t, sock, "call", "g", "TaskCreate", `{"subject":"a"}`)
	require.Equal(t, 0, code)
	out, _, code := cli(t, sock, "status")
	require.Equal(t, 0, code)
	assert.NotContains(t, out, "PROBLEM")

	for _, suffix := range []string{"", "-wal", "-shm"} {
		require.NoError(t, os.Remove(dbPath+suffix))
	}
	out, errOut, code := cli(t, sock, "call", "g", "TaskCreate", `{"subject":"b"}`)
	assert.NotEqual(t, 0, code, out)
	assert.Contains(t, errOut+out, dbPath+" was deleted, moved or replaced")
	out, _, code = cli(t, sock, "status")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "PROBLEM")
	assert.Contains(t, out, "was deleted, moved or replaced")

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	p.cmd.Wait()
	assert.Contains(t, p.stderr.String(), "the database file is gone; refusing writes")
}

// TestHostParent ensures the bridge takes the npm launcher's parent as its
// host only when its own parent is the launcher that says so.
func TestHostParent(t *testing.T) {
	assert.Equal(t, 100, main.HostParent(100, ""), "no launcher")
	assert.Equal(t, 7, main.HostParent(100, "100 7"), "started by the launcher")
	assert.Equal(t, 100, main.HostParent(100, "55 7"), "inherited from a launcher further up")
	assert.Equal(t, 100, main.HostParent(100, "100 1"), "the launcher orphaned")
	assert.Equal(t, 100, main.HostParent(100, "junk"))
}
