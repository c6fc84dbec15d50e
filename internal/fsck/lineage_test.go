package fsck_test

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/fsck"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// chainsDB makes sessions sa, sb→sb2 and sc→sc2→sc3 (each → a
// compaction), each with a task or two.
func chainsDB(t *testing.T) string {
	t.Helper()
	return fixture(t, "chains", buildChainsDB)
}

func buildChainsDB(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	d := testutil.MustOpenDBAt(t, path)
	m := session.NewManager(d, nil)
	create := func(id string) {
		t.Helper()
		_, err := m.Call(ctx, wire.ToolCall{SessionID: id, Name: tools.TaskCreate, Arguments: []byte(`{"subject":"in ` + id + `"}`)})
		require.NoError(t, err)
	}
	for _, chain := range [][]string{{"sa"}, {"sb", "sb2"}, {"sc", "sc2", "sc3"}} {
		_, err := m.Create(ctx, wire.CreateSession{SessionID: chain[0]})
		require.NoError(t, err)
		create(chain[0])
		for i, next := range chain[1:] {
			_, err := m.Compact(ctx, wire.Compact{SessionID: chain[i], NewSessionID: next})
			require.NoError(t, err)
			create(next)
		}
	}
	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	require.True(t, r.OK(), "%+v", r)
	require.NoError(t, d.Close())
	return path
}

// advice is every statement fsck's problems say to run, as written.
var advice = regexp.MustCompile(`\(sqlite3: ([^()]*(?:\([^()]*\)[^()]*)*)\)`)

func check(t *testing.T, path string) fsck.Report {
	t.Helper()
	d, err := db.OpenReadOnly(ctx, path)
	require.NoError(t, err)
	defer d.Close()
	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	return r
}

func TestLineageAdviceMends(t *testing.T) {
	// Ensures a lineage cycle is named as a cycle, with all its sessions,
	// and that every statement fsck advises, applied as written, makes
	// fsck clean: the edge made by hand is cut, none is added.
	for _, tc := range []struct {
		name, edit, cycle string
	}{
		{"SelfSuccessor", `UPDATE sessions SET successor_id='sa' WHERE id='sa'`, "sa → sa"},
		{"TailNamesHead", `UPDATE sessions SET successor_id='sc' WHERE id='sc3'`, "sc → sc2 → sc3 → sc"},
		{"HeadsParentIsTail", `UPDATE sessions SET parent_id='sc3' WHERE id='sc'`, "sc → sc2 → sc3 → sc"},
		{"BothColumns", `UPDATE sessions SET parent_id='sb2' WHERE id='sb'; UPDATE sessions SET successor_id='sb', status='compacted' WHERE id='sb2'`, "sb → sb2 → sb"},
		{"NamesAnotherRoot", `UPDATE sessions SET successor_id='sa', status='compacted' WHERE id='sb2'`, ""},
		// A session sealed by hand into another's successor: the daemon
		// followed sa into sb2 and served sb2's list as sa's.
		{"NamesAnothersSuccessor", `UPDATE sessions SET successor_id='sb2', status='compacted' WHERE id='sa'`, ""},
		{"HeadNamesAnothersSuccessor", `UPDATE sessions SET successor_id='sc3', status='compacted' WHERE id='sb2'`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each its own file
			path := chainsDB(t)
			damage(t, path, tc.edit)
			r := check(t, path)
			require.False(t, r.OK())
			var all []string
			for _, s := range r.Sessions {
				all = append(all, s.Problems...)
			}
			text := strings.Join(all, "\n")
			t.Log(text)
			if tc.cycle != "" {
				assert.Contains(t, text, "its lineage is a cycle: "+tc.cycle)
			}
			var fixes []string
			for _, m := range advice.FindAllStringSubmatch(text, -1) {
				fixes = append(fixes, strings.Split(m[1], "; ")...)
			}
			require.NotEmpty(t, fixes, text)
			damage(t, path, fixes...)
			after := check(t, path)
			assert.True(t, after.OK(), "advice %q left: %+v", fixes, after)
		})
	}
}

func TestSealedIntoAnothersSuccessorRefused(t *testing.T) {
	// Ensures a session sealed by hand into a session compacted from
	// another (sa's successor_id set to sb2) is refused by name, where the
	// daemon followed it and served sb2's list as sa's; sb2 itself, and
	// sb, are served as they were.
	path := chainsDB(t)
	damage(t, path, `UPDATE sessions SET successor_id='sb2', status='compacted' WHERE id='sa'`)
	d := testutil.MustOpenDBAt(t, path)
	c := testutil.StartDaemon(t, d).Dial(t)
	_, err := c.GetSession(ctx, "sa")
	var ce *client.Error
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, wire.CodeSessionDamaged, ce.Code)
	assert.Contains(t, ce.Message, "session sa names successor sb2, which was compacted from sb, not from it")
	assert.Equal(t, 1, strings.Count(ce.Message, "damaged"), ce.Message)
	_, err = c.ResumeSession(ctx, "sa")
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, wire.CodeSessionDamaged, ce.Code)
	for id, n := range map[string]int{"sb": 1, "sb2": 2} {
		r, err := c.ResumeSession(ctx, id)
		require.NoError(t, err, id)
		assert.Len(t, r.Tasks, n, id)
	}
}
