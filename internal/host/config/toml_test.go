package config_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

func TestTOMLBlock(t *testing.T) {
	// Ensures setup's block is appended with nothing else touched, replaced
	// in place, refused when it repeats the user's table, and removed to
	// give the original bytes back, comments, CRLF and a missing final
	// newline included.
	body := "[mcp_servers.tasks]\ncommand = \"tasksessiond\"\n"
	for _, orig := range []string{
		"",
		"# my codex\nmodel = \"o3\" # the best\n\n[mcp_servers.other]\ncommand = \"x\"\n",
		"model = \"o3\"",
		"model = \"o3\"\r\n# crlf\r\n",
	} {
		out, err := config.SetBlock([]byte(orig), "tasksessiond", body)
		require.NoError(t, err)
		assert.Equal(t, orig, string(out[:len(orig)]), "the bytes before the block changed")
		assert.Equal(t, body, normalize(config.Block(out, "tasksessiond")))
		var v struct {
			MCP map[string]struct{ Command string } `toml:"mcp_servers"`
		}
		require.NoError(t, config.DecodeTOML(out, &v))
		assert.Equal(t, "tasksessiond", v.MCP["tasks"].Command)
		again, err := config.SetBlock(out, "tasksessiond", body)
		require.NoError(t, err)
		assert.Equal(t, string(out), string(again), "a second run changed the file")
		back, err := config.RemoveBlock(out, "tasksessiond")
		require.NoError(t, err)
		assert.Equal(t, orig, string(back))
	}
	_, err := config.SetBlock([]byte("[mcp_servers.tasks]\ncommand = \"mine\"\n"), "tasksessiond", body)
	require.Error(t, err)
	_, err = config.SetBlock([]byte("model = \n"), "tasksessiond", body)
	require.Error(t, err)
}

func normalize(s string) string {
	out := []byte{}
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' {
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}
