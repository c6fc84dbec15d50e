package main_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	main "github.com/tasksessiond/tasksessiond/cmd/tasksessiond"
	"github.com/tasksessiond/tasksessiond/internal/pgdb"
	"github.com/tasksessiond/tasksessiond/internal/pgtest"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

func TestServeRefusesAFleetDatabaseANewerDaemonMigrated(t *testing.T) {
	// Ensures serve on a fleet database a newer daemon has migrated exits
	// 1 before listening, its log saying which schema the database is,
	// which this binary knows, and to upgrade this daemon.
	ctx := context.Background()
	srv := pgtest.StartFor(t, pgtest.Options{})
	url, err := srv.CreateDB(ctx, "newer")
	require.NoError(t, err)
	d, err := pgdb.Open(ctx, url, pgdb.Options{})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	raw, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer raw.Close()
	p, err := pgdb.Migrations(raw)
	require.NoError(t, err)
	sources := p.ListSources()
	next := sources[len(sources)-1].Version + 1
	_, err = raw.ExecContext(ctx, `INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)`, next)
	require.NoError(t, err)

	sock := testutil.SocketPath(t)
	var o, e bytes.Buffer
	code := main.Run(ctx, []string{"serve", "--db", url, "--socket", sock}, strings.NewReader(""), &o, &e)
	assert.Equal(t, 1, code)
	assert.Contains(t, e.String(), "cannot start")
	assert.Contains(t, e.String(), fmt.Sprintf("the database is schema %d, this binary knows up to %d: a newer tasksessiond migrated it; upgrade this daemon to the fleet's version", next, next-1))
	_, err = os.Stat(sock)
	assert.ErrorIs(t, err, os.ErrNotExist, "never listened")
}
