package main_test

import (
	"context"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

func TestClientsRefuseAnImpostor(t *testing.T) {
	// Ensures the CLI, the SessionStart hook and the MCP bridge each refuse
	// a socket another user listens on (in a directory that user made
	// first, as the default /tmp/tasksessiond-UID can be; or moved into
	// this user's own directory, where only SO_PEERCRED tells): each says
	// why, the hook adds nothing and exits 0, no daemon is started, and the
	// impostor reads not a byte.
	for name, moved := range map[string]bool{"DirectoryOfAnotherUser": false, "ListenerOfAnotherUser": true} {
		t.Run(name, func(t *testing.T) {
			imp := testutil.StartImpostor(t, testutil.ImpostorDir(t))
			sock, want := imp.Socket, "belongs to uid 65534"
			if moved {
				sock, want = testutil.SocketPath(t), "runs as uid 65534"
				require.NoError(t, os.Rename(imp.Socket, sock))
			}
			t.Setenv("TASKSESSIOND_AUTOSTART", "1")

			_, stderr, code := cli(t, sock, "status")
			assert.Equal(t, 1, code)
			assert.Contains(t, stderr, "posing as the daemon")
			assert.Contains(t, stderr, want)

			stdout, stderr, code := runHook(t, sock, hookInput("s", "resume"))
			assert.Equal(t, 0, code)
			assert.Empty(t, stdout, "nothing for the model")
			assert.Contains(t, stderr, "posing as the daemon")

			cs, _ := mcpSessionEnv(t, nil, "--socket", sock, "--session", "s")
			r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "TaskCreate", Arguments: map[string]any{"subject": "secret plan"}})
			require.NoError(t, err)
			assert.True(t, r.IsError)
			assert.Contains(t, text(r), "posing as the daemon")
			assert.NotContains(t, text(r), "IMPOSTOR")

			assert.Empty(t, imp.Read(), "the impostor read nothing")
			assert.Zero(t, countDaemons(t, sock), "no daemon was started")
		})
	}
}
