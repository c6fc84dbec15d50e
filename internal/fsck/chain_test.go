package fsck_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/fsck"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

func TestChainDamageIsALogProblem(t *testing.T) {
	// Ensures fsck checks each session's checksum chain as the daemon
	// does: an edit replay cannot see (a result's bytes, a callId dropped,
	// the last row deleted) is named where the chain breaks, the session
	// is left by repair as it is, and the other session is clean.
	for _, tc := range []struct{ name, edit, want string }{
		{"result edited", `UPDATE tool_calls SET result = replace(result, '"pending"', '"pendinf"') WHERE session_id = 'S' AND seq = 2`,
			"row 2 does not match its checksum (edited, copied from elsewhere, or a byte flipped) (checksum chain broken at seq 2): the daemon refuses this session"},
		{"callId dropped", `UPDATE tool_calls SET call_id = NULL WHERE session_id = 'S' AND seq = 5`, "row 5 does not match its checksum"},
		{"last row deleted", `DELETE FROM tool_calls WHERE session_id = 'S' AND seq = 8`, "row 8 is missing from the end of its log (checksum chain broken at seq 8)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := lineageDB(t)
			damage(t, path, tc.edit)
			before := changeColumns(t, path)
			d := testutil.MustOpenDBAt(t, path)
			r, err := fsck.Check(ctx, d)
			require.NoError(t, err)
			assert.Contains(t, problems(r)[sS], tc.want)
			assert.True(t, sessionOf(r, sS).LogDamaged)
			_, done, err := fsck.Repair(ctx, d)
			require.NoError(t, err)
			assert.Contains(t, done.Left, sS)
			assert.Equal(t, before, changeColumns(t, path), "repair changed nothing of it")
		})
	}
}

func TestForeignObjectsAreProblems(t *testing.T) {
	// Ensures a trigger the schema does not define is a named problem,
	// with the statement that drops it.
	path := lineageDB(t)
	damage(t, path, `CREATE TRIGGER user_evil AFTER INSERT ON tool_calls WHEN new.session_id='S' BEGIN DELETE FROM tool_calls WHERE rowid=new.rowid; END`)
	d, err := db.OpenReadOnly(ctx, path)
	require.NoError(t, err)
	defer d.Close()
	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.False(t, r.OK())
	assert.Equal(t, []string{`trigger user_evil on tool_calls, which the schema does not define (sqlite3: DROP TRIGGER "user_evil";)`}, r.Foreign)
}

func TestBadTimesAreNamed(t *testing.T) {
	// Ensures a time edited to something that is not one is named at its
	// row, with the statement that sets it, and marks no log damaged.
	path := lineageDB(t)
	damage(t, path, `UPDATE tool_calls SET created_at = 'garbage' WHERE session_id = 'S' AND seq = 3`,
		`UPDATE sessions SET created_at = 'x' WHERE id = 'N'`)
	d := testutil.MustOpenDBAt(t, path)
	r, err := fsck.Check(ctx, d)
	require.NoError(t, err)
	assert.Contains(t, problems(r)[sS], `seq 3: its created_at "garbage" is not a time (it blocks nothing; sqlite3: UPDATE tool_calls SET created_at = '1970-01-01T00:00:00.000000Z' WHERE session_id = 'S' AND seq = 3)`)
	assert.Contains(t, problems(r)[sN], `its record: its created_at "x" is not a time`)
	assert.False(t, sessionOf(r, sS).LogDamaged)
}
