package client_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

func TestRefusesAnImpostor(t *testing.T) {
	// Ensures Dial checks whoever listens on the socket before it sends a
	// byte: a socket directory another user owns (as when another user
	// makes /tmp/tasksessiond-UID first), one open to other users, and a
	// listener that runs as another user (SO_PEERCRED) are each refused
	// with ErrUntrusted, and the impostor reads nothing.
	ctx := context.Background()
	dial := func(t *testing.T, socket string) error {
		c, err := client.Dial(ctx, socket)
		if err == nil {
			c.Status(ctx) // what a client would do next
			c.Close()
		}
		return err
	}
	t.Run("DirectoryOfAnotherUser", func(t *testing.T) {
		imp := testutil.StartImpostor(t, testutil.ImpostorDir(t))
		err := dial(t, imp.Socket)
		require.ErrorIs(t, err, client.ErrUntrusted)
		assert.ErrorContains(t, err, "belongs to uid 65534")
		assert.ErrorContains(t, err, "posing as the daemon")
		assert.Empty(t, imp.Read())
	})
	t.Run("ListenerOfAnotherUser", func(t *testing.T) {
		imp := testutil.StartImpostor(t, testutil.ImpostorDir(t))
		// Its socket, moved into a private directory of this user's: only
		// the peer's uid tells it from the daemon.
		sock := testutil.SocketPath(t)
		require.NoError(t, os.Rename(imp.Socket, sock))
		err := dial(t, sock)
		require.ErrorIs(t, err, client.ErrUntrusted)
		assert.ErrorContains(t, err, "runs as uid 65534, not as this user")
		assert.Empty(t, imp.Read())
	})
	t.Run("SharedDirectory", func(t *testing.T) {
		sock := os.Getenv("TASKSESSIOND_SOCKET") // the real daemon's
		dir := filepath.Dir(sock)
		require.NoError(t, os.Chmod(dir, 0o777))
		defer os.Chmod(dir, 0o700)
		err := dial(t, sock)
		require.ErrorIs(t, err, client.ErrUntrusted)
		assert.ErrorContains(t, err, "other users can write to it")
	})
	t.Run("OwnDaemon", func(t *testing.T) {
		assert.NoError(t, dial(t, os.Getenv("TASKSESSIOND_SOCKET")))
	})
	t.Run("NoDaemon", func(t *testing.T) {
		err := dial(t, filepath.Join(t.TempDir(), "none", "d.sock"))
		assert.NotErrorIs(t, err, client.ErrUntrusted)
	})
}
