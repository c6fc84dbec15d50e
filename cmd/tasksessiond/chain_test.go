package main_test

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

func TestDamagedSessionShownAsRefused(t *testing.T) {
	// Ensures what a user sees of a session whose log lost a row while the
	// daemon was stopped: `tasks` fails naming it and what to run,
	// `sessions` lists it as refused with why beside the other session,
	// `status` names it, and fsck reports where the chain breaks.
	dbPath := filepath.Join(t.TempDir(), "c.db")
	sock := testutil.SocketPath(t)
	p := startDaemon(t, dbPath, sock)
	for _, id := range []string{"ok", "sb2"} {
		_, _, code := cli(t, sock, "new", "--id", id)
		require.Equal(t, 0, code)
		for _, args := range []string{`{"subject":"a"}`, `{"subject":"b"}`, `{"subject":"c"}`} {
			_, _, code = cli(t, sock, "call", id, "TaskCreate", args)
			require.Equal(t, 0, code)
		}
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, p.cmd.Wait(), p.stderr.String())
	raw := testutil.RawDB(t, dbPath)
	_, err := raw.Exec(`DELETE FROM tool_calls WHERE session_id = 'sb2' AND seq = 2`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	startDaemon(t, dbPath, sock)
	const why = "session sb2: row 2 is missing from its log (checksum chain broken at seq 3): run tasksessiond fsck"
	_, errOut, code := cli(t, sock, "tasks", "sb2")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, why)
	out, _, code := cli(t, sock, "tasks", "ok")
	assert.Equal(t, 0, code, "the other session is served")
	assert.Contains(t, out, "c")
	out, _, code = cli(t, sock, "sessions")
	assert.Equal(t, 0, code)
	assert.Regexp(t, `sb2\s+refused`, out)
	assert.Contains(t, out, why)
	out, _, code = cli(t, sock, "status")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "REFUSED")
	assert.Contains(t, out, why)
	out, _, code = cli(t, sock, "fsck", "--db", dbPath)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "session sb2: row 2 is missing from its log (checksum chain broken at seq 3)")
}
