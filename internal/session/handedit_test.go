package session_test

// Replay of rows edited by hand, and transcripts with odd arguments.

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// noPanic runs f and returns what it panicked with, nil if nothing.
func noPanic(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// editedDB is a database holding session "s" with two creates, row seq's
// arguments then set to arguments as the sqlite3 shell would.
func editedDB(t *testing.T, seq int, arguments string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.db")
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	m := session.NewManager(d, nil)
	_, err = m.Create(ctx, wire.CreateSession{SessionID: "s"})
	require.NoError(t, err)
	call(t, m, "s", tools.TaskCreate, `{"subject":"a"}`)
	call(t, m, "s", tools.TaskCreate, `{"subject":"b"}`)
	require.NoError(t, d.Close())
	raw := testutil.RawDB(t, path)
	// The schema's CHECK off, as a hand edit can have it.
	_, err = raw.Exec(`PRAGMA ignore_check_constraints = 1`)
	require.NoError(t, err)
	_, err = raw.Exec(`UPDATE tool_calls SET arguments = CAST(? AS TEXT) WHERE session_id = 's' AND seq = ?`, []byte(arguments), seq)
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	return path
}

func TestReplayOfLoggedStringHoldingAString(t *testing.T) {
	// Ensures a row whose arguments are a string holding a string
	// ("\"{}\"", which the schema's CHECK accepts) is skipped or refused
	// clearly, and the session is served after.
	for _, args := range []string{`"\"{}\""`, `"\"{\\\"subject\\\":\\\"x\\\"}\""`, `"\"[]\""`, `"\"\\\"{}\\\"\""`} {
		t.Run(args, func(t *testing.T) {
			path := editedDB(t, 2, args)
			d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
			require.NoError(t, err)
			t.Cleanup(func() { d.Close() })
			m := session.NewManager(d, nil)
			p := noPanic(func() { m.Resume(ctx, "s") })
			assert.Nil(t, p, "sessions/resume of a hand-edited row panicked")

			// The server recovers a panic and answers "internal error";
			// the next call of the session must not wait forever.
			c, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			var rerr error
			p = noPanic(func() { _, rerr = m.Resume(c, "s") })
			assert.Nil(t, p)
			assert.NotErrorIs(t, rerr, context.DeadlineExceeded, "the session's mutex was left locked by the panic: every later call of the session hangs")
			c2, cancel2 := context.WithTimeout(ctx, 2*time.Second)
			defer cancel2()
			_, cerr := m.Call(c2, wire.ToolCall{SessionID: "s", Name: tools.TaskList, Arguments: json.RawMessage(`{}`)})
			assert.NotErrorIs(t, cerr, context.DeadlineExceeded, "TaskList of the session hangs")
		})
	}
}

func TestSessionsReplayOfOddArgumentsKeepsMemoryWithTheLog(t *testing.T) {
	// Ensures a transcript whose arguments are strings wrapped in strings
	// leaves memory as the log has it: its arguments are read once, as a
	// live call's are, and memory never gets ahead of the log.
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	m := session.NewManager(d, nil)
	triple := json.RawMessage(`"\"\\\"{}\\\"\""`)
	p := noPanic(func() {
		_, err = m.Replay(ctx, wire.ReplaySession{SessionID: "r", Calls: []wire.TranscriptCall{
			{Name: tools.TaskCreate, Arguments: json.RawMessage(`{"subject":"applied in memory only"}`)},
			{Name: tools.TaskCreate, Arguments: triple},
		}})
	})
	assert.Nil(t, p, "sessions/replay panicked on a transcript's arguments")

	got, err := m.Resume(ctx, "r")
	require.NoError(t, err)
	fresh := session.NewManager(d, nil)
	logged, err := fresh.Resume(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, len(logged.Tasks), len(got.Tasks), "memory (%d tasks) disagrees with the log (%d tasks)", len(got.Tasks), len(logged.Tasks))
	if len(got.Tasks) != len(logged.Tasks) {
		out, err := m.Call(ctx, wire.ToolCall{SessionID: "r", Name: tools.TaskCreate, Arguments: json.RawMessage(`{"subject":"next"}`)})
		require.NoError(t, err)
		t.Logf("next create, live: %.80s", out)
		fresh2 := session.NewManager(d, nil)
		after, err := fresh2.Resume(ctx, "r")
		require.NoError(t, err)
		t.Logf("after a restart the log replays to %d task(s): %s", len(after.Tasks), fmt.Sprint(after.Tasks))
	}
}

func TestReplayOfHandEditedArguments(t *testing.T) {
	// Odd values in a row's arguments (set with the schema's CHECK off,
	// as a hand edit can): the session must load, or be refused with a
	// clear error, promptly, and be served again after.
	for _, args := range []string{
		"{\"subject\":\"a\xffb\"}", `{"subject":"a\ud800b"}`, `{"subject":"a\u0000b"}`, "{\"subject\":\"a\x00b\"}",
		`{"subject":"x","description":"a\u0000b"}`, `"{\"subject\":\"x\"}"`, `"{\"subject\":\"x\ud800\"}"`,
		`{"taskid":1e999,"status":"completed"}`, `{"subject":123456789012345678901234567890}`,
		strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000), strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
		"", "not json", "\xff", "{\"subject\":\"x\"", `{"subject":"x"} {"subject":"y"}`, `{"Subject":"x"}`,
		`{"subject":"x","subject":"y"}`, `{"subject":"x","wait_for_previous":{"a":1,"a":2},"\ud800":1}`, "\"\\\"{}\\\"\"",
	} {
		t.Run(fmt.Sprintf("%.40q", args), func(t *testing.T) {
			t.Parallel() // each its own file: they wait on the disk, not on each other
			path := editedDB(t, 1, args)
			d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
			require.NoError(t, err)
			t.Cleanup(func() { d.Close() })
			m := session.NewManager(d, nil)
			for i := range 2 {
				c, cancel := context.WithTimeout(ctx, 2*time.Second)
				var res wire.Resumed
				var rerr error
				p := noPanic(func() { res, rerr = m.Resume(c, "s") })
				cancel()
				if !assert.Nil(t, p, "resume %d panicked", i) {
					continue
				}
				if !assert.NotErrorIs(t, rerr, context.DeadlineExceeded, "resume %d hangs", i) {
					continue
				}
				if rerr == nil {
					t.Logf("resume %d: %d tasks, report %+v", i, len(res.Tasks), res.Replay)
				} else {
					t.Logf("resume %d: %v", i, rerr)
				}
			}
		})
	}
}
