package session_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// lineages is the fixture: sa alone; sb compacted into sb2; sc
// into sc2 into sc3. Each session has tasks created, updated and deleted.
var lineageIDs = []string{"sa", "sb", "sb2", "sc", "sc2", "sc3"}

func lineagesDB(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "l.db")
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	m := session.NewManager(d, nil)
	work := func(id string, n int) {
		for i := range n {
			call(t, m, id, tools.TaskCreate, `{"subject":"`+id+` task `+string(rune('a'+i))+`"}`)
		}
		call(t, m, id, tools.TaskUpdate, `{"taskid":1,"status":"completed"}`)
		call(t, m, id, tools.TaskUpdate, `{"taskid":2,"status":"deleted"}`)
		call(t, m, id, tools.TaskList, `{}`)
	}
	compact := func(old, succ string) {
		_, err := m.Compact(ctx, wire.Compact{SessionID: old, NewSessionID: succ})
		require.NoError(t, err)
	}
	for _, id := range []string{"sa", "sb", "sc"} {
		_, err := m.Create(ctx, wire.CreateSession{SessionID: id})
		require.NoError(t, err)
		work(id, 4)
	}
	compact("sb", "sb2")
	work("sb2", 3)
	compact("sc", "sc2")
	work("sc2", 3)
	compact("sc2", "sc3")
	work("sc3", 3)
	require.NoError(t, d.Close())
	return path
}

func copyDB(t testing.TB, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "copy.db")
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.Create(to)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
	return to
}

// served is what the daemon answers for each session: its list (the
// resumed tasks) or its refusal.
func served(t testing.TB, c *client.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, id := range lineageIDs {
		r, err := c.ResumeSession(ctx, id)
		if err != nil {
			out[id] = "error: " + err.Error()
			continue
		}
		out[id] = tasksText(r.Tasks)
	}
	return out
}

func tasksText(ts []tasksessiond.Task) string {
	s := ""
	for _, t := range ts {
		s += fmt.Sprintf("%+v\n", t)
	}
	return s
}

func TestDamagedLogRefusedByName(t *testing.T) {
	// Ensures a session whose log was changed while the daemon was stopped
	// (a row deleted, edited, moved, copied, a bit flipped, a callId
	// dropped, a result broken) is refused by name, for reads and writes,
	// with -32007 and what broke where, never served as another list; the
	// other sessions are served as before, and status names the refusal.
	fixture := lineagesDB(t)
	before := func() map[string]string {
		d := testutil.MustOpenDBAt(t, copyDB(t, fixture))
		return served(t, testutil.StartDaemon(t, d).Dial(t))
	}()
	for _, id := range lineageIDs {
		require.NotContains(t, before[id], "error", id)
	}
	for _, tc := range []struct {
		name, edit string
		refused    map[string]string // session → the refusal's message
	}{
		{"middle row deleted", `DELETE FROM tool_calls WHERE session_id = 'sb2' AND seq = 2`,
			map[string]string{"sb2": "session sb2: row 2 is missing from its log (checksum chain broken at seq 3): run tasksessiond fsck"}},
		{"last row deleted", `DELETE FROM tool_calls WHERE session_id = 'sa' AND seq = 6`,
			map[string]string{"sa": "session sa: row 6 is missing from the end of its log (checksum chain broken at seq 6): run tasksessiond fsck"}},
		{"tool renamed", `UPDATE tool_calls SET name = 'TaskList' WHERE session_id = 'sa' AND seq = 6`,
			map[string]string{"sa": "session sa: row 6 does not match its checksum"}},
		{"is_error set", `UPDATE tool_calls SET is_error = 1 WHERE session_id = 'sa' AND seq = 6`,
			map[string]string{"sa": "session sa: row 6 does not match its checksum"}},
		{"bit flipped in arguments", `UPDATE tool_calls SET arguments = replace(arguments, 'deleted', 'deleued') WHERE session_id = 'sa' AND seq = 6`,
			map[string]string{"sa": "row 6 does not match its checksum"}},
		{"row moved to another session", `UPDATE tool_calls SET session_id = 'sc3', seq = 7 WHERE session_id = 'sa' AND seq = 6`,
			map[string]string{"sa": "row 6 is missing from the end of its log", "sc3": "row 7 does not match its checksum"}},
		{"row copied", `INSERT INTO tool_calls (session_id, seq, call_id, name, arguments, is_error, result, forced, created_at, checksum)
			SELECT 'sb2', 7, call_id, name, arguments, is_error, result, forced, created_at, checksum FROM tool_calls WHERE session_id = 'sa' AND seq = 2`,
			map[string]string{"sb2": "row 7 does not match its checksum"}},
		{"seqs swapped", `UPDATE tool_calls SET seq = 100 WHERE session_id = 'sc' AND seq = 3;
			UPDATE tool_calls SET seq = 3 WHERE session_id = 'sc' AND seq = 4;
			UPDATE tool_calls SET seq = 4 WHERE session_id = 'sc' AND seq = 100`,
			map[string]string{"sc": "row 3 does not match its checksum"}},
		{"callId dropped", `UPDATE tool_calls SET call_id = NULL WHERE session_id = 'sc3' AND seq = 1`,
			map[string]string{"sc3": "row 1 does not match its checksum"}},
		{"result not JSON", `UPDATE tool_calls SET result = '{"broken' WHERE session_id = 'sb' AND seq = 3`,
			map[string]string{"sb": "row 3 does not match its checksum"}},
		{"checksum gone", `UPDATE tool_calls SET checksum = NULL WHERE session_id = 'sc2' AND seq = 1`,
			map[string]string{"sc2": "row 1 has no checksum"}},
		{"snapshot task edited", `UPDATE snapshot_tasks SET subject = 'x' WHERE session_id = 'sb2' AND taskid = 3`,
			map[string]string{"sb2": "session sb2: row 1 does not match its checksum, which covers the snapshot it started from"}},
		{"snapshot's next taskid edited", `UPDATE snapshots SET next_taskid = 99 WHERE session_id = 'sc3'`,
			map[string]string{"sc3": "row 1 does not match its checksum, which covers the snapshot"}},
		// Bad values in columns the chain does not cover refuse nothing,
		// and block neither their session nor the listing.
		{"a call's time not a time", `UPDATE tool_calls SET created_at = 'garbage' WHERE session_id = 'sa' AND seq = 6`, nil},
		{"a session's times not times", `UPDATE sessions SET updated_at = 'garbage', created_at = 'x' WHERE id IN ('sc3', 'sb')`, nil},
		{"head gone", `DELETE FROM log_heads WHERE session_id = 'sa'`,
			map[string]string{"sa": "session sa: its head (the log_heads row every session has from its creation) is missing: its rows 1 to 6 check"}},
		{"log and head gone", `DELETE FROM tool_calls WHERE session_id = 'sa'; DELETE FROM log_heads WHERE session_id = 'sa'`,
			map[string]string{"sa": "session sa: its head (the log_heads row every session has from its creation) is missing, and so is every row of its log"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each its own copy and daemon
			path := copyDB(t, fixture)
			raw := testutil.RawDB(t, path)
			_, err := raw.Exec(tc.edit)
			require.NoError(t, err)
			require.NoError(t, raw.Close())
			dm := testutil.StartDaemon(t, testutil.MustOpenDBAt(t, path))
			c := dm.Dial(t)
			got := served(t, c)
			for _, id := range lineageIDs {
				want, refused := tc.refused[id]
				if !refused {
					assert.Equal(t, before[id], got[id], "%s is served as it was", id)
					continue
				}
				assert.Contains(t, got[id], want, id)
				// Refused for a read and for a write alike, with its own code.
				for _, name := range []string{tools.TaskList, tools.TaskCreate} {
					_, err := c.CallTool(ctx, client.ToolCall{SessionID: id, Name: name, Arguments: map[string]any{"subject": "x"}})
					var ce *client.Error
					require.True(t, errors.As(err, &ce), "%s %s: %v", id, name, err)
					assert.Equal(t, wire.CodeSessionDamaged, ce.Code)
					assert.Contains(t, ce.Message, want)
					assert.Contains(t, ce.Message, "session "+id+": ")
					assert.Contains(t, ce.Message, "run tasksessiond fsck")
				}
			}
			st, err := c.Status(ctx)
			require.NoError(t, err)
			var names []string
			for _, r := range st.Refused {
				names = append(names, r.ID)
				assert.Contains(t, r.Reason, tc.refused[r.ID])
			}
			assert.Len(t, names, len(tc.refused), "status names the refused sessions: %v", names)
			list, _, err := c.ListSessions(ctx, tasksessiond.ListFilter{})
			require.NoError(t, err)
			assert.Len(t, list, len(lineageIDs), "the listing is not blocked")
			for _, s := range list {
				assert.Equal(t, tc.refused[s.ID] != "", s.Refused != "", "%s listed as refused: %q", s.ID, s.Refused)
			}
		})
	}
}

func TestRetryFromADamagedAncestorIsRefused(t *testing.T) {
	// Ensures a retry answered from an ancestor's log (its callId logged
	// before a compaction) is checked against its row's checksum: an
	// edited row is refused by name, not sent back as the recorded result.
	path := filepath.Join(t.TempDir(), "r.db")
	testutil.FreshDB(t, path)
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	m := session.NewManager(d, nil)
	_, err = m.Create(ctx, wire.CreateSession{SessionID: "s"})
	require.NoError(t, err)
	p := wire.ToolCall{SessionID: "s", Name: tools.TaskCreate, CallID: "c1", Arguments: []byte(`{"subject":"a"}`)}
	first, err := m.Call(ctx, p)
	require.NoError(t, err)
	_, err = m.Compact(ctx, wire.Compact{SessionID: "s", NewSessionID: "s2"})
	require.NoError(t, err)
	p.SessionID = "s2"
	again, err := session.NewManager(d, nil).Call(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, string(first), string(again), "answered from the parent's log")
	require.NoError(t, d.Close())

	raw := testutil.RawDB(t, path)
	_, err = raw.Exec(`UPDATE tool_calls SET result = replace(result, 'pending', 'deleted') WHERE session_id = 's' AND seq = 1`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	d, err = db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	require.NoError(t, err)
	defer d.Close()
	_, err = session.NewManager(d, nil).Call(ctx, p)
	require.Error(t, err)
	assert.Equal(t, tasksessiond.KindDamaged, tasksessiond.KindOf(err))
	assert.Contains(t, err.Error(), "session s: row 1 does not match its checksum")
}
