package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/crashtest"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/fsck"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/store"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

var ctx = context.Background()

type result struct {
	IsError           bool `json:"isError"`
	StructuredContent struct {
		Task  *tasksessiond.Task  `json:"task"`
		Tasks []tasksessiond.Task `json:"tasks"`
	} `json:"structuredContent"`
}

func decodeResult(t testing.TB, raw json.RawMessage) result {
	t.Helper()
	var r result
	require.NoError(t, json.Unmarshal(raw, &r))
	return r
}

func newSession(t testing.TB, m *session.Manager) string {
	t.Helper()
	info, err := m.Create(ctx, wire.CreateSession{Title: "test"})
	require.NoError(t, err)
	return info.ID
}

func call(t testing.TB, m *session.Manager, id, name, args string) result {
	t.Helper()
	raw, err := m.Call(ctx, wire.ToolCall{SessionID: id, Name: name, Arguments: json.RawMessage(args)})
	require.NoError(t, err)
	return decodeResult(t, raw)
}

func TestReplayPropertyMatchesLive(t *testing.T) {
	// Ensures, over many seeds, that random valid and invalid calls applied
	// live and then replayed from the database by a fresh manager yield the
	// same tasks and ids, and that the tasks view agrees.
	path := t.TempDir() + "/p.db"
	d := testutil.MustOpenDBAt(t, path)
	live := session.NewManager(d, nil)
	var ids []string
	model := map[string]*store.Store{}
	for seed := range 40 {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		id := newSession(t, live)
		ids = append(ids, id)
		model[id] = store.New()
		for range 20 + r.IntN(30) {
			name, args := crashtest.RandomCall(r, model[id].Len())
			res := call(t, live, id, name, args)
			// The model: the same call on a plain store.
			c, _, err := tools.Decode(name, json.RawMessage(args), tools.Live)
			if err != nil {
				assert.True(t, res.IsError, "%s %s", name, args)
				continue
			}
			want, _ := tools.Execute(model[id], c)
			assert.Equal(t, want.IsError, res.IsError, "%s %s", name, args)
		}
	}

	fresh := session.NewManager(d, nil) // nothing in memory: everything replays
	for _, id := range ids {
		got, err := fresh.Resume(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, model[id].List(), nilIfEmpty(got.Tasks), id)
		assert.Equal(t, model[id].NextTaskid(), got.NextTaskid, id)
		assert.Zero(t, got.Replay.Divergent, id)
		projected, err := d.Tasks(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, model[id].List(), nilIfEmpty(projected), "tasks view of %s", id)
	}
}

func nilIfEmpty(ts []tasksessiond.Task) []tasksessiond.Task {
	if len(ts) == 0 {
		return nil
	}
	return ts
}

func TestResumeSkipsPlantedRows(t *testing.T) {
	// Ensures replay skips a row recorded as an error and a row whose
	// arguments no longer decode, inserted directly, and reports both.
	path := t.TempDir() + "/r.db"
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	defer d.Close()
	m := session.NewManager(d, nil)
	id := newSession(t, m)
	call(t, m, id, tools.TaskCreate, `{"subject":"one"}`)

	raw := testutil.RawDB(t, path)
	for seq, row := range []struct{ name, args, isError string }{
		{tools.TaskCreate, `{"subject":"failed then"}`, "1"},
		{tools.TaskCreate, `{"title":"old schema"}`, "0"},
		{tools.TaskCreate, `{"subject":"two"}`, "0"},
	} {
		_, err := raw.Exec(`INSERT INTO tool_calls (session_id, seq, name, arguments, is_error, result, created_at) VALUES (?, ?, ?, ?, ?, '{}', '2026-01-01T00:00:00.000000Z')`,
			id, seq+2, row.name, row.args, row.isError)
		require.NoError(t, err)
	}
	testutil.Rechain(t, raw, id)

	got, err := session.NewManager(d, nil).Resume(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, 2, got.Replay.Applied)
	assert.Equal(t, 1, got.Replay.SkippedErrors)
	assert.Equal(t, 1, got.Replay.SkippedInvalid)
	require.Len(t, got.Tasks, 2)
	assert.Equal(t, "two", got.Tasks[1].Subject)
	assert.Equal(t, 2, got.Tasks[1].Taskid)

	// fsck replays the rows the same way, and says what the hand-made row
	// lacks: the change columns the tasks view reads.
	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	require.Len(t, r.Sessions, 1)
	assert.Equal(t, 2, r.Sessions[0].Tasks)
	assert.Equal(t, got.Replay.Applied, r.Sessions[0].Replay.Applied)
	assert.Contains(t, strings.Join(r.Sessions[0].Problems, "\n"), "seq 4: its change columns hold no change, its arguments replay to task 2 pending subject \"two\"")
}

func TestCallIDRetry(t *testing.T) {
	// Ensures a retry with the same callId returns the recorded result byte
	// for byte and applies nothing, also from a fresh manager (a restart).
	d := testutil.MustOpenDB(t)
	m := session.NewManager(d, nil)
	id := newSession(t, m)
	p := wire.ToolCall{SessionID: id, Name: tools.TaskCreate, Arguments: json.RawMessage(`{"subject":"a"}`), CallID: "toolu_1"}
	first, err := m.Call(ctx, p)
	require.NoError(t, err)

	p.Arguments = json.RawMessage(`{ "subject" : "a" }`) // same arguments, other spacing
	again, err := m.Call(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, string(first), string(again))

	restarted := session.NewManager(d, nil)
	again, err = restarted.Call(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, string(first), string(again))

	got, err := restarted.Resume(ctx, id)
	require.NoError(t, err)
	assert.Len(t, got.Tasks, 1, "the retries applied nothing")

	p.Arguments = json.RawMessage(`{"subject":"b"}`)
	_, err = restarted.Call(ctx, p)
	assert.Equal(t, tasksessiond.KindConflict, tasksessiond.KindOf(err))
	assert.ErrorContains(t, err, "use a new callId")
}

func TestFailedCommitLeavesMemoryEqualToDatabase(t *testing.T) {
	// Ensures a commit that fails is not acknowledged, leaves nothing in
	// memory that the database lacks, and that writes resume afterwards
	// without skipping a taskid.
	path := t.TempDir() + "/f.db"
	d := testutil.MustOpenDBAt(t, path)
	m := session.NewManager(d, nil)
	id := newSession(t, m)
	call(t, m, id, tools.TaskCreate, `{"subject":"one"}`)

	raw := testutil.RawDB(t, path)
	_, err := raw.Exec(`CREATE TRIGGER fail_inserts BEFORE INSERT ON tool_calls BEGIN SELECT RAISE(ABORT, 'disk says no'); END`)
	require.NoError(t, err)

	_, err = m.Call(ctx, wire.ToolCall{SessionID: id, Name: tools.TaskCreate, Arguments: json.RawMessage(`{"subject":"lost"}`)})
	require.Error(t, err)
	assert.Equal(t, tasksessiond.KindUnavailable, tasksessiond.KindOf(err))

	got, err := m.Resume(ctx, id)
	require.NoError(t, err, "reads keep working")
	require.Len(t, got.Tasks, 1, "the failed create is not in memory")

	_, err = raw.Exec(`DROP TRIGGER fail_inserts`)
	require.NoError(t, err)
	res := call(t, m, id, tools.TaskCreate, `{"subject":"two"}`)
	assert.Equal(t, 2, res.StructuredContent.Task.Taskid)
}

func TestUnknownSessionAndTool(t *testing.T) {
	d := testutil.MustOpenDB(t)
	m := session.NewManager(d, nil)
	_, err := m.Call(ctx, wire.ToolCall{SessionID: "nope", Name: tools.TaskList})
	assert.Equal(t, tasksessiond.KindNotFound, tasksessiond.KindOf(err))
	id := newSession(t, m)
	_, err = m.Call(ctx, wire.ToolCall{SessionID: id, Name: "TaskDelete"})
	assert.Equal(t, tasksessiond.KindInvalid, tasksessiond.KindOf(err))
	assert.ErrorContains(t, err, "the tools are TaskCreate, TaskList, TaskGet, TaskUpdate")
	_, err = m.Call(ctx, wire.ToolCall{SessionID: "", Name: tools.TaskList})
	assert.Equal(t, tasksessiond.KindInvalid, tasksessiond.KindOf(err))
	_, err = m.Call(ctx, wire.ToolCall{SessionID: id, Name: tools.TaskList, Role: "root"})
	assert.Equal(t, tasksessiond.KindInvalid, tasksessiond.KindOf(err))
}

func TestToolErrorsAreLogged(t *testing.T) {
	// Ensures a failed tool call is logged as an error and changes nothing.
	d := testutil.MustOpenDB(t)
	m := session.NewManager(d, nil)
	id := newSession(t, m)
	res := call(t, m, id, tools.TaskUpdate, `{"taskid":1,"status":"completed"}`)
	assert.True(t, res.IsError)
	rows, err := d.Calls(ctx, id)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.True(t, rows[0].IsError)
	assert.Equal(t, int64(1), rows[0].Seq)
}

func TestCreateSession(t *testing.T) {
	d := testutil.MustOpenDB(t)
	m := session.NewManager(d, nil)
	info, err := m.Create(ctx, wire.CreateSession{SessionID: "mine", Title: "T", Metadata: json.RawMessage(`{"host":"x"}`)})
	require.NoError(t, err)
	assert.Equal(t, "mine", info.ID)
	assert.Equal(t, tasksessiond.SessionActive, info.Status)
	assert.JSONEq(t, `{"host":"x"}`, string(info.Metadata))
	_, err = m.Create(ctx, wire.CreateSession{SessionID: "mine"})
	assert.Equal(t, tasksessiond.KindExists, tasksessiond.KindOf(err))
	_, err = m.Create(ctx, wire.CreateSession{SessionID: "has space"})
	assert.Equal(t, tasksessiond.KindInvalid, tasksessiond.KindOf(err))
	_, err = m.Create(ctx, wire.CreateSession{Metadata: json.RawMessage(`[1]`)})
	assert.Equal(t, tasksessiond.KindInvalid, tasksessiond.KindOf(err))
	gen, err := m.Create(ctx, wire.CreateSession{})
	require.NoError(t, err)
	assert.NotEmpty(t, gen.ID)

	// Input that would fail later, or forever, is refused as invalid here,
	// with nothing created: a title with NUL or a newline, metadata nested
	// past what SQLite's JSON functions read (it was "storage unavailable,
	// retry", which never succeeds).
	for name, p := range map[string]wire.CreateSession{
		"NUL in title":     {SessionID: "t1", Title: "a\x00b"},
		"newline in title": {SessionID: "t2", Title: "a\nb"},
		"deep metadata":    {SessionID: "t3", Metadata: json.RawMessage(`{"a":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`)},
	} {
		_, err := m.Create(ctx, p)
		assert.Equal(t, tasksessiond.KindInvalid, tasksessiond.KindOf(err), "%s: %v", name, err)
		_, err = m.Get(ctx, p.SessionID)
		assert.Equal(t, tasksessiond.KindNotFound, tasksessiond.KindOf(err), name)
	}
	_, err = m.Create(ctx, wire.CreateSession{SessionID: "t4", Metadata: json.RawMessage(`{"a":"[[[[\"\\"}`)})
	assert.NoError(t, err, "brackets inside strings are not nesting")

	_, err = m.Call(ctx, wire.ToolCall{SessionID: "mine", Name: tools.TaskList, CallID: "x\x00y"})
	assert.Equal(t, tasksessiond.KindInvalid, tasksessiond.KindOf(err), "NUL in a callId")
}

func TestReplayTranscript(t *testing.T) {
	// Ensures sessions/replay builds a new session from a host's transcript,
	// skipping error and invalid calls, and that it then resumes like any other.
	d := testutil.MustOpenDB(t)
	m := session.NewManager(d, nil)
	got, err := m.Replay(ctx, wire.ReplaySession{SessionID: "from-host", Calls: []wire.TranscriptCall{
		{Name: tools.TaskCreate, Arguments: json.RawMessage(`"{\"subject\":\"a\"}"`), CallID: "c1"},
		{Name: tools.TaskCreate, Arguments: json.RawMessage(`{"subject":"x"}`), IsError: true},
		{Name: tools.TaskUpdate, Arguments: json.RawMessage(`{"taskid":1,"status":"completed"}`), CallID: "c2"},
		{Name: tools.TaskUpdate, Arguments: json.RawMessage(`{"taskid":1}`)},
		{Name: tools.TaskList},
		{Name: tools.TaskCreate, Arguments: json.RawMessage(`{"subject":"b"}`)},
	}})
	require.NoError(t, err)
	assert.Equal(t, 3, got.Replay.Applied)
	assert.Equal(t, 1, got.Replay.SkippedErrors)
	assert.Equal(t, 1, got.Replay.SkippedInvalid)
	want := []tasksessiond.Task{{Taskid: 1, Status: tasksessiond.Completed, Subject: "a"}, {Taskid: 2, Status: tasksessiond.Pending, Subject: "b"}}
	assert.Equal(t, want, got.Tasks)

	again, err := session.NewManager(d, nil).Resume(ctx, "from-host")
	require.NoError(t, err)
	assert.Equal(t, want, again.Tasks)

	_, err = m.Replay(ctx, wire.ReplaySession{SessionID: "from-host"})
	assert.Equal(t, tasksessiond.KindExists, tasksessiond.KindOf(err), "a session with a history is not replayed into")
	_, err = m.Replay(ctx, wire.ReplaySession{SessionID: "dup", Calls: []wire.TranscriptCall{{Name: tools.TaskList, CallID: "x"}, {Name: tools.TaskList, CallID: "x"}}})
	assert.Equal(t, tasksessiond.KindInvalid, tasksessiond.KindOf(err))
}

func errAs(err error, target **tasksessiond.Error) bool { return errors.As(err, target) }

func TestListCounts(t *testing.T) {
	// Ensures sessions/list gives each session its own counts (one query for the page).
	d := testutil.MustOpenDB(t)
	m := session.NewManager(d, nil)
	a, b := newSession(t, m), newSession(t, m)
	call(t, m, a, tools.TaskCreate, `{"subject":"x"}`)
	call(t, m, a, tools.TaskCreate, `{"subject":"y"}`)
	call(t, m, a, tools.TaskUpdate, `{"taskid":1,"status":"completed"}`)
	list, _, err := m.List(ctx, tasksessiond.ListFilter{})
	require.NoError(t, err)
	got := map[string]tasksessiond.Counts{}
	for _, s := range list {
		got[s.ID] = s.Counts
	}
	assert.Equal(t, tasksessiond.Counts{Total: 2, Pending: 1, Completed: 1}, got[a])
	assert.Equal(t, tasksessiond.Counts{}, got[b])
}

func TestBadCursorIsInvalidParams(t *testing.T) {
	// Ensures a cursor sessions/list never gave out is the caller's
	// mistake (invalid params), not storage being unavailable.
	m := session.NewManager(testutil.MustOpenDB(t), nil)
	for _, cursor := range []string{"abc", "1.5", "--"} {
		_, _, err := m.List(ctx, tasksessiond.ListFilter{Cursor: cursor})
		require.Error(t, err)
		assert.Equal(t, tasksessiond.KindInvalid, tasksessiond.KindOf(err), cursor)
		assert.Contains(t, err.Error(), "is not one that sessions/list returned")
	}
}

func TestTimesReadBackAsAnswered(t *testing.T) {
	// Ensures the times sessions/create answers (on the real clock, with
	// nanoseconds) are the ones a later sessions/get reads back.
	path := t.TempDir() + "/t.db"
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	defer d.Close()
	m := session.NewManager(d, nil)
	for range 5 {
		created, err := m.Create(ctx, wire.CreateSession{})
		require.NoError(t, err)
		got, err := m.Get(ctx, created.ID)
		require.NoError(t, err)
		assert.True(t, created.CreatedAt.Equal(got.CreatedAt), "%s vs %s", created.CreatedAt, got.CreatedAt)
		a, _ := json.Marshal(created.CreatedAt)
		b, _ := json.Marshal(got.CreatedAt)
		assert.Equal(t, string(a), string(b), "the same on the wire")
		assert.Equal(t, string(must(json.Marshal(created.UpdatedAt))), string(must(json.Marshal(got.UpdatedAt))))
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestResumeReportsTheLastCall(t *testing.T) {
	// Ensures sessions/resume reports updatedAt as sessions/get does (the
	// last logged call), not the time the session was loaded.
	d := testutil.MustOpenDB(t)
	m := session.NewManager(d, nil)
	id := newSession(t, m)
	call(t, m, id, tools.TaskCreate, `{"subject":"a"}`)
	first, err := m.Resume(ctx, id)
	require.NoError(t, err)
	call(t, m, id, tools.TaskCreate, `{"subject":"b"}`)
	got, err := m.Get(ctx, id)
	require.NoError(t, err)
	resumed, err := m.Resume(ctx, id)
	require.NoError(t, err)
	assert.True(t, got.UpdatedAt.After(first.Session.UpdatedAt), "the clock moved")
	assert.Equal(t, got.UpdatedAt, resumed.Session.UpdatedAt)
}

func TestReadsAreNotLogged(t *testing.T) {
	// Ensures reads (TaskList, TaskGet, failed or not) add no row to the
	// log: the log is of the changes replay needs, and a read of a long
	// list must not grow the database by its whole result each time.
	d := testutil.MustOpenDB(t)
	m := session.NewManager(d, nil)
	id := newSession(t, m)
	call(t, m, id, tools.TaskCreate, `{"subject":"a","description":"`+strings.Repeat("d", 10_000)+`"}`)
	before, err := d.Calls(ctx, id)
	require.NoError(t, err)
	for i := range 20 {
		call(t, m, id, tools.TaskList, `{}`)
		call(t, m, id, tools.TaskGet, `{"taskid":1}`)
		_, err := m.Call(ctx, wire.ToolCall{SessionID: id, Name: tools.TaskGet, CallID: fmt.Sprintf("r%d", i), Arguments: json.RawMessage(`{"taskid":99}`)})
		require.NoError(t, err)
	}
	after, err := d.Calls(ctx, id)
	require.NoError(t, err)
	assert.Len(t, after, len(before))
}
