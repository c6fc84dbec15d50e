package pgtest_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// Ensures a test gets a fresh database of its own on a running server,
// that survives a restart of the server.
func TestNewDB(t *testing.T) {
	url := pgtest.NewDB(t)
	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	_, err = db.ExecContext(ctx, "CREATE TABLE t (x int)")
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "INSERT INTO t VALUES (1)")
	require.NoError(t, err)
	require.NoError(t, pgtest.Shared(t).Restart())
	var n int
	require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n))
	require.Equal(t, 1, n)
}
