package session_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/compact"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// planted makes a session with four tasks: #1 completed, #2 deleted, #3 inprogress, #4 pending.
func planted(t *testing.T, m *session.Manager) string {
	t.Helper()
	id := newSession(t, m)
	for _, s := range []string{"done one", "dropped one", "doing one", "todo one"} {
		call(t, m, id, tools.TaskCreate, `{"subject":"`+s+`","description":"about `+s+`"}`)
	}
	call(t, m, id, tools.TaskUpdate, `{"taskid":1,"status":"completed"}`)
	call(t, m, id, tools.TaskUpdate, `{"taskid":2,"status":"deleted"}`)
	call(t, m, id, tools.TaskUpdate, `{"taskid":3,"status":"inprogress"}`)
	return id
}

func TestCompactKeepsEveryTask(t *testing.T) {
	// Ensures compaction carries every task (completed and deleted too) into
	// the successor, injects the snapshot text, fires a TaskList listing
	// them all, continues the numbering, and seals the old session.
	d := testutil.MustOpenDB(t)
	m := session.NewManager(d, nil)
	old := planted(t, m)
	before, err := m.Resume(ctx, old)
	require.NoError(t, err)
	snap, err := m.Snapshot(ctx, old)
	require.NoError(t, err)

	out, err := m.Compact(ctx, wire.Compact{SessionID: old, Summary: "we did things", NewSessionID: "gen2"})
	require.NoError(t, err)
	assert.Equal(t, "gen2", out.Session.ID)
	assert.Equal(t, old, out.Session.ParentID)
	assert.Equal(t, tasksessiond.Counts{Total: 4, Pending: 1, InProgress: 1, Completed: 1, Deleted: 1}, out.Session.Counts)

	require.Len(t, out.Messages, 2)
	assert.Equal(t, tasksessiond.Message{Role: "system", Kind: compact.KindTaskSnapshot, Content: snap.Text}, out.Messages[0], "the injected text is the snapshot's")
	assert.Equal(t, tasksessiond.Message{Role: "system", Kind: compact.KindSummary, Content: "we did things"}, out.Messages[1])
	for _, line := range []string{"#1 [completed] done one", "#2 [deleted] dropped one", "#3 [inprogress] doing one", "#4 [pending] todo one", "next TaskCreate gets #5"} {
		assert.Contains(t, snap.Text, line)
	}

	assert.Equal(t, tools.TaskList, out.ForcedCall.Name)
	assert.Equal(t, compact.ForcedCallID("gen2"), out.ForcedCall.CallID)
	forced := decodeResult(t, out.ForcedCall.Result)
	assert.ElementsMatch(t, before.Tasks, forced.StructuredContent.Tasks, "every task, the open ones first")

	listed := call(t, m, "gen2", tools.TaskList, `{}`)
	assert.ElementsMatch(t, before.Tasks, listed.StructuredContent.Tasks)
	created := call(t, m, "gen2", tools.TaskCreate, `{"subject":"after"}`)
	assert.Equal(t, 5, created.StructuredContent.Task.Taskid, "never a reused id")

	// The old session is sealed for writes, readable, and says where to go.
	_, err = m.Call(ctx, wire.ToolCall{SessionID: old, Name: tools.TaskCreate, Arguments: json.RawMessage(`{"subject":"late"}`)})
	require.Error(t, err)
	var se *tasksessiond.Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, tasksessiond.KindSealed, se.Kind)
	assert.Equal(t, "gen2", se.SuccessorID)
	_, err = m.Call(ctx, wire.ToolCall{SessionID: old, Name: tools.TaskUpdate, Arguments: json.RawMessage(`garbage-shaped`)})
	assert.Equal(t, tasksessiond.KindSealed, tasksessiond.KindOf(err))
	got := call(t, m, old, tools.TaskGet, `{"taskid":4}`)
	assert.Equal(t, "todo one", got.StructuredContent.Task.Subject)
	info, err := m.Get(ctx, old)
	require.NoError(t, err)
	assert.Equal(t, tasksessiond.SessionCompacted, info.Status)
	assert.Equal(t, "gen2", info.SuccessorID)
	_, err = m.Compact(ctx, wire.Compact{SessionID: old})
	assert.Equal(t, tasksessiond.KindSealed, tasksessiond.KindOf(err))

	rows, err := d.Calls(ctx, old)
	require.NoError(t, err)
	assert.Len(t, rows, 7, "nothing was logged to the sealed session")
	_, err = m.Compact(ctx, wire.Compact{SessionID: "gen2", NewSessionID: old})
	assert.Equal(t, tasksessiond.KindExists, tasksessiond.KindOf(err))
}

func TestResumeCompactedAfterRestart(t *testing.T) {
	// Ensures three generations of compaction each resume after a restart
	// with the same store, messages and forced call, seeded from the
	// snapshot and replaying only their own rows.
	d := testutil.MustOpenDB(t)
	m := session.NewManager(d, nil)
	gen := planted(t, m)
	var want []wire.Resumed
	ids := []string{gen}
	for g := range 3 {
		out, err := m.Compact(ctx, wire.Compact{SessionID: gen, Summary: fmt.Sprintf("summary %d", g)})
		require.NoError(t, err)
		gen = out.Session.ID
		ids = append(ids, gen)
		call(t, m, gen, tools.TaskCreate, fmt.Sprintf(`{"subject":"gen %d"}`, g+2))
		call(t, m, gen, tools.TaskUpdate, `{"taskid":4,"status":"completed"}`)
		r, err := m.Resume(ctx, gen)
		require.NoError(t, err)
		want = append(want, r)
	}
	restarted := session.NewManager(d, nil)
	for g, id := range ids[1:] {
		got, err := restarted.Resume(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, want[g].Tasks, got.Tasks, "generation %d", g+2)
		assert.Equal(t, want[g].NextTaskid, got.NextTaskid)
		assert.Equal(t, want[g].Messages, got.Messages)
		require.NotNil(t, got.ForcedCall)
		assert.Equal(t, want[g].ForcedCall, got.ForcedCall)
		assert.LessOrEqual(t, got.Replay.Applied, 2, "only its own writes are replayed, from its snapshot")
		assert.Equal(t, ids[g], got.Session.ParentID)
		projected, err := d.Tasks(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, got.Tasks, projected, "the tasks view of generation %d", g+2)
	}
	last, err := restarted.Resume(ctx, gen)
	require.NoError(t, err)
	assert.Len(t, last.Tasks, 7)
	assert.Equal(t, 8, last.NextTaskid)

	// sessions/get names the head of the lineage from every generation.
	for _, id := range ids {
		info, err := restarted.Get(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, gen, info.HeadID, "head seen from %s", id)
	}
}

func TestCompactWorkerCannotWrite(t *testing.T) {
	// Ensures the compact worker's writes are refused whatever their
	// arguments, its reads work, and none of its calls is logged.
	d := testutil.MustOpenDB(t)
	m := session.NewManager(d, nil)
	id := planted(t, m)
	rowsBefore, err := d.Calls(ctx, id)
	require.NoError(t, err)
	before, err := m.Resume(ctx, id)
	require.NoError(t, err)

	for _, name := range []string{tools.TaskCreate, tools.TaskUpdate} {
		for _, args := range []string{`{"subject":"x"}`, `{"taskid":1,"status":"deleted"}`, `{}`, `null`, `[1]`, `"{\"subject\":\"x\"}"`, `{"bogus":1}`, `17`} {
			raw, err := m.Call(ctx, wire.ToolCall{SessionID: id, Name: name, Arguments: json.RawMessage(args), Role: "compact_worker", CallID: "cw-" + name + args})
			require.NoError(t, err)
			res := decodeResult(t, raw)
			assert.True(t, res.IsError, "%s %s", name, args)
			assert.Contains(t, string(raw), "the compact worker cannot edit tasks")
		}
	}
	call(t, m, id, tools.TaskList, `{}`) // the agent's own read, not logged either (reads never are)
	raw, err := m.Call(ctx, wire.ToolCall{SessionID: id, Name: tools.TaskGet, Arguments: json.RawMessage(`{"taskid":3}`), Role: "compact_worker"})
	require.NoError(t, err)
	assert.Equal(t, "doing one", decodeResult(t, raw).StructuredContent.Task.Subject)

	after, err := m.Resume(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, before.Tasks, after.Tasks)
	rowsAfter, err := d.Calls(ctx, id)
	require.NoError(t, err)
	assert.Len(t, rowsAfter, len(rowsBefore), "reads are not logged, the compact worker's nor the agent's")
}

func TestWritesRacingCompaction(t *testing.T) {
	// Ensures a writer hammering a session while it is compacted loses
	// nothing: every acknowledged call is in exactly one generation, none
	// lands in the sealed session after the snapshot, and the successor's
	// store equals a model of the acknowledged calls.
	d := testutil.MustOpenDB(t)
	m := session.NewManager(d, nil)
	old := newSession(t, m)

	const writers, perWriter = 4, 30
	var mu sync.Mutex
	acked := map[string]int{} // callId -> taskid
	var wg sync.WaitGroup
	compacted := make(chan string, 1)
	third := make(chan struct{}) // closed once a third of the calls are acknowledged
	var once sync.Once
	landed := make(chan struct{}) // closed once the compaction has committed
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			target := old
			for i := 0; i < perWriter; i++ {
				if i == perWriter*5/6 {
					// The last calls wait for the compaction, so that some
					// surely go to the successor whatever the timing.
					<-landed
				}
				callID := fmt.Sprintf("w%d-%d", w, i)
				raw, err := m.Call(ctx, wire.ToolCall{SessionID: target, Name: tools.TaskCreate, CallID: callID,
					Arguments: json.RawMessage(fmt.Sprintf(`{"subject":%q}`, callID))})
				var se *tasksessiond.Error
				if errAs(err, &se) && se.Kind == tasksessiond.KindSealed {
					target = se.SuccessorID
					i-- // send the same call to the successor
					continue
				}
				if !assert.NoError(t, err) {
					return
				}
				var r result
				json.Unmarshal(raw, &r)
				mu.Lock()
				acked[callID] = r.StructuredContent.Task.Taskid
				if len(acked) >= writers*perWriter/3 {
					once.Do(func() { close(third) })
				}
				mu.Unlock()
			}
		}()
	}
	go func() {
		<-third
		out, err := m.Compact(ctx, wire.Compact{SessionID: old})
		assert.NoError(t, err)
		close(landed)
		compacted <- out.Session.ID
	}()
	wg.Wait()
	succ := <-compacted

	oldRows, err := d.Calls(ctx, old)
	require.NoError(t, err)
	newRows, err := d.Calls(ctx, succ)
	require.NoError(t, err)
	seen := map[string]int{}
	for _, r := range append(oldRows, newRows...) {
		seen[r.CallID]++
	}
	require.Len(t, acked, writers*perWriter)
	for id := range acked {
		assert.Equal(t, 1, seen[id], "call %s is in exactly one generation", id)
	}
	assert.NotEmpty(t, oldRows)
	assert.Greater(t, len(newRows), 1, "some writes landed in the successor")

	got, err := session.NewManager(d, nil).Resume(ctx, succ)
	require.NoError(t, err)
	require.Len(t, got.Tasks, writers*perWriter)
	ids := map[int]bool{}
	for _, task := range got.Tasks {
		assert.Equal(t, acked[task.Subject], task.Taskid, "task %s has the id it was acknowledged with", task.Subject)
		ids[task.Taskid] = true
	}
	assert.Len(t, ids, writers*perWriter, "no id was reused")
	oldStore, err := session.NewManager(d, nil).Snapshot(ctx, old)
	require.NoError(t, err)
	assert.Equal(t, len(oldRows), len(oldStore.Tasks), "the sealed session holds exactly the creates before the snapshot")
	assert.True(t, strings.HasPrefix(got.Messages[0].Content, "Task list carried over"))
}

func TestResumeOfSuccessorReadsNoAncestorRow(t *testing.T) {
	// Ensures resuming a compacted session costs the same whatever its
	// ancestors' history: it seeds from the snapshot and replays only its
	// own rows. The ancestors' logs are wiped underneath a fresh manager; a
	// resume that read them would lose tasks or report applied calls.
	path := filepath.Join(t.TempDir(), "t.db")
	d := testutil.MustOpenDBAt(t, path)
	m := session.NewManager(d, nil)
	first := planted(t, m)
	for i := range 40 {
		call(t, m, first, tools.TaskUpdate, fmt.Sprintf(`{"taskid":4,"subject":"todo one, take %d"}`, i))
	}
	mid, err := m.Compact(ctx, wire.Compact{SessionID: first})
	require.NoError(t, err)
	call(t, m, mid.Session.ID, tools.TaskCreate, `{"subject":"in the middle generation"}`)
	last, err := m.Compact(ctx, wire.Compact{SessionID: mid.Session.ID})
	require.NoError(t, err)
	want, err := m.Resume(ctx, last.Session.ID)
	require.NoError(t, err)
	require.Len(t, want.Tasks, 5)

	raw := testutil.RawDB(t, path)
	res, err := raw.Exec(`DELETE FROM tool_calls WHERE session_id IN (?, ?)`, first, mid.Session.ID)
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.EqualValues(t, 7+40+2, n, "the ancestors' rows, the middle one's forced TaskList included")

	got, err := session.NewManager(d, nil).Resume(ctx, last.Session.ID)
	require.NoError(t, err)
	assert.Equal(t, want.Tasks, got.Tasks)
	assert.Equal(t, 6, got.NextTaskid)
	assert.Equal(t, want.Messages, got.Messages)
	assert.Equal(t, want.ForcedCall, got.ForcedCall)
	assert.Equal(t, tasksessiond.ReplayReport{}, got.Replay, "only its own forced TaskList is replayed, and it applies nothing")
}

func TestCompactCarriesEveryTaskAndItsTimes(t *testing.T) {
	// Ensures the successor holds the old session's tasks as its store had
	// them, through the tasks view and when it is loaded, each carried
	// task keeping the time it was created.
	path := filepath.Join(t.TempDir(), "t.db")
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	defer d.Close()
	m := session.NewManager(d, nil)
	id := planted(t, m)
	call(t, m, id, tools.TaskUpdate, `{"taskid":4,"status":"inprogress","subject":"changed later"}`)
	call(t, m, id, tools.TaskCreate, `{"subject":"created later","description":"\"quoted\", tab\t, \u00e9, \ud83d\ude00, \\ and a\nnewline"}`)
	raw := testutil.RawDB(t, d.Path())
	created := createdAt(t, raw, id)
	require.Len(t, created, 5)
	out, err := m.Compact(ctx, wire.Compact{SessionID: id, NewSessionID: "next"})
	require.NoError(t, err)

	want, err := m.Resume(ctx, "next")
	require.NoError(t, err)
	require.Len(t, want.Tasks, 5)
	fresh, err := session.NewManager(d, nil).Resume(ctx, "next")
	require.NoError(t, err)
	assert.Equal(t, want.Tasks, fresh.Tasks, "the snapshot SQLite wrote loads as the store it came from")
	assert.Equal(t, want.NextTaskid, fresh.NextTaskid)
	assert.Equal(t, want.Tasks, projected(t, raw, "tasks", "next"), "the view reads the successor's snapshot")
	assert.Equal(t, created, createdAt(t, raw, "next"))

	// A change to a carried task.
	call(t, m, "next", tools.TaskUpdate, `{"taskid":2,"subject":"changed in the successor"}`)
	want, err = m.Resume(ctx, "next")
	require.NoError(t, err)
	assert.Equal(t, want.Tasks, projected(t, raw, "tasks", "next"))
	assert.Equal(t, created, createdAt(t, raw, "next"), "a change keeps the carried created_at")
	assert.Equal(t, "next", out.Session.ID)
}

// projected reads a session's tasks from table.
func projected(t *testing.T, raw *sql.DB, table, id string) []tasksessiond.Task {
	t.Helper()
	rows, err := raw.Query(`SELECT taskid, status, subject, description FROM `+table+` WHERE session_id = ? ORDER BY taskid`, id)
	require.NoError(t, err)
	defer rows.Close()
	var got []tasksessiond.Task
	for rows.Next() {
		var task tasksessiond.Task
		require.NoError(t, rows.Scan(&task.Taskid, &task.Status, &task.Subject, &task.Description))
		got = append(got, task)
	}
	require.NoError(t, rows.Err())
	return got
}

// createdAt reads each task's created_at through the tasks view.
func createdAt(t *testing.T, raw *sql.DB, id string) map[int]string {
	t.Helper()
	rows, err := raw.Query(`SELECT taskid, created_at FROM tasks WHERE session_id = ?`, id)
	require.NoError(t, err)
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var taskid int
		var at string
		require.NoError(t, rows.Scan(&taskid, &at))
		out[taskid] = at
	}
	require.NoError(t, rows.Err())
	return out
}

func TestCallIDHoldsAcrossALineage(t *testing.T) {
	// Ensures exactly-once holds across compaction: a write retried with
	// its callId against the successor (or the successor's successor) of
	// the session that recorded it gets the recorded result and creates
	// nothing, whether the successor was made in this process or is loaded
	// after a restart; and the callId used for another call is a conflict.
	path := filepath.Join(t.TempDir(), "lineage.db")
	d := testutil.MustOpenDBAt(t, path)
	m := session.NewManager(d, nil)
	old := newSession(t, m)
	first, err := m.Call(ctx, wire.ToolCall{SessionID: old, Name: tools.TaskCreate, CallID: "c1", Arguments: json.RawMessage(`{"subject":"once"}`)})
	require.NoError(t, err)
	_, err = m.Compact(ctx, wire.Compact{SessionID: old, NewSessionID: "gen2"})
	require.NoError(t, err)
	_, err = m.Call(ctx, wire.ToolCall{SessionID: "gen2", Name: tools.TaskCreate, CallID: "c2", Arguments: json.RawMessage(`{"subject":"twice"}`)})
	require.NoError(t, err)
	_, err = m.Compact(ctx, wire.Compact{SessionID: "gen2", NewSessionID: "gen3"})
	require.NoError(t, err)

	// A restart between the two compactions: gen2 is loaded from the log,
	// then compacted here; its successor must still know c1.
	mid := session.NewManager(d, nil)
	_, err = mid.Call(ctx, wire.ToolCall{SessionID: "gen3", Name: tools.TaskList})
	require.NoError(t, err)
	_, err = mid.Compact(ctx, wire.Compact{SessionID: "gen3", NewSessionID: "gen4"})
	require.NoError(t, err)
	again, err := mid.Call(ctx, wire.ToolCall{SessionID: "gen4", Name: tools.TaskCreate, CallID: "c1", Arguments: json.RawMessage(`{"subject":"once"}`)})
	require.NoError(t, err)
	assert.JSONEq(t, string(first), string(again), "a successor compacted from a loaded session knows its grandparents' callIds")
	got, err := mid.Resume(ctx, "gen4")
	require.NoError(t, err)
	assert.Len(t, got.Tasks, 2)

	for name, mgr := range map[string]*session.Manager{"in memory": m, "after a restart": session.NewManager(d, nil)} {
		again, err := mgr.Call(ctx, wire.ToolCall{SessionID: "gen3", Name: tools.TaskCreate, CallID: "c1", Arguments: json.RawMessage(`{"subject":"once"}`)})
		require.NoError(t, err, name)
		assert.JSONEq(t, string(first), string(again), "%s: the recorded result", name)
		_, err = mgr.Call(ctx, wire.ToolCall{SessionID: "gen3", Name: tools.TaskCreate, CallID: "c2", Arguments: json.RawMessage(`{"subject":"twice"}`)})
		require.NoError(t, err, name)
		_, err = mgr.Call(ctx, wire.ToolCall{SessionID: "gen3", Name: tools.TaskCreate, CallID: "c1", Arguments: json.RawMessage(`{"subject":"something else"}`)})
		var se *tasksessiond.Error
		require.ErrorAs(t, err, &se, name)
		assert.Equal(t, tasksessiond.KindConflict, se.Kind, name)
		got, err := mgr.Resume(ctx, "gen3")
		require.NoError(t, err)
		assert.Len(t, got.Tasks, 2, "%s: nothing was created twice", name)
	}
}
