package config_test

import (
	"strings"
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
		out, err := config.SetBlock([]byte(orig), "tasksessiond", body, ours)
		require.NoError(t, err)
		assert.Equal(t, orig, string(out[:len(orig)]), "the bytes before the block changed")
		assert.Equal(t, body, normalize(config.Block(out, "tasksessiond")))
		var v struct {
			MCP map[string]struct{ Command string } `toml:"mcp_servers"`
		}
		require.NoError(t, config.DecodeTOML(out, &v))
		assert.Equal(t, "tasksessiond", v.MCP["tasks"].Command)
		again, err := config.SetBlock(out, "tasksessiond", body, ours)
		require.NoError(t, err)
		assert.Equal(t, string(out), string(again), "a second run changed the file")
		back, err := config.RemoveBlock(out, "tasksessiond", ours)
		require.NoError(t, err)
		assert.Equal(t, orig, string(back))
	}
	_, err := config.SetBlock([]byte("[mcp_servers.tasks]\ncommand = \"mine\"\n"), "tasksessiond", body, func(string) bool { return false })
	require.Error(t, err)
	_, err = config.SetBlock([]byte("model = \n"), "tasksessiond", body, ours)
	require.Error(t, err)
}

// ours claims the server's tables, as Codex's setup does.
func ours(header string) bool { return strings.HasPrefix(header, "mcp_servers.tasks") }

func TestTOMLBlockKeepsTheHostsTables(t *testing.T) {
	// Ensures tables a host wrote inside setup's block (Codex prints a new
	// table before the file's last comment: the end marker) are kept when
	// setup writes its block again or takes it out, moved out after it.
	body := "[mcp_servers.tasks]\ncommand = \"tasksessiond\"\n"
	for _, nl := range []string{"\n", "\r\n"} {
		out, err := config.SetBlock([]byte("model = \"o3\""+nl), "tasksessiond", body, ours)
		require.NoError(t, err)
		theirs := "[projects.\"/home/u/p\"] # trusted in Codex" + nl + "trust_level = \"trusted\"" + nl + "[mcp_servers.foo]" + nl + "command = \"x\"" + nl
		end := "# <<< tasksessiond <<<"
		withTheirs := strings.Replace(string(out), end, theirs+end, 1)
		require.NoError(t, config.CheckTOML([]byte(withTheirs)))

		again, err := config.SetBlock([]byte(withTheirs), "tasksessiond", strings.Replace(body, "tasksessiond", "/opt/tsd", 1), ours)
		require.NoError(t, err)
		assert.Contains(t, string(again), end+nl+theirs, "the host's tables were not kept after the block")
		assert.Equal(t, "[mcp_servers.tasks]\ncommand = \"/opt/tsd\"\n", normalize(config.Block(again, "tasksessiond")))
		same, err := config.SetBlock(again, "tasksessiond", strings.Replace(body, "tasksessiond", "/opt/tsd", 1), ours)
		require.NoError(t, err)
		assert.Equal(t, string(again), string(same), "a second run changed the file")

		back, err := config.RemoveBlock([]byte(withTheirs), "tasksessiond", ours)
		require.NoError(t, err)
		assert.Equal(t, "model = \"o3\""+nl+nl+theirs, string(back))
	}
}

func TestTOMLBlockAfterTheHostRewroteIt(t *testing.T) {
	// Ensures setup's tables left outside its block (Codex writes the
	// servers' tables anew, without the begin marker before them) are
	// taken out before the block is written again, or removed, with the
	// marker left alone; the host's tables and comments stay.
	body := "[mcp_servers.tasks]\ncommand = \"tasksessiond\"\n"
	rewritten := "model = \"o3\"\n[mcp_servers.tasks]\ncommand = \"old\"\nstartup_timeout_sec = 30.0\n# mine\n[mcp_servers.tasks.env]\nX = \"1\"\n[mcp_servers.mine]\ncommand = \"x\"\n# <<< tasksessiond <<<\n"
	out, err := config.SetBlock([]byte(rewritten), "tasksessiond", body, ours)
	require.NoError(t, err)
	assert.Equal(t, "model = \"o3\"\n# mine\n[mcp_servers.mine]\ncommand = \"x\"\n\n"+
		"# >>> tasksessiond >>> (added by \"tasksessiond setup\"; \"--uninstall\" removes it)\n"+body+"# <<< tasksessiond <<<\n", string(out))
	back, err := config.RemoveBlock([]byte(rewritten), "tasksessiond", ours)
	require.NoError(t, err)
	assert.Equal(t, "model = \"o3\"\n# mine\n[mcp_servers.mine]\ncommand = \"x\"\n", string(back))

	// a stray table just before the block: what follows the block stays
	block, err := config.SetBlock([]byte("model = \"o3\"\n"), "tasksessiond", body, ours)
	require.NoError(t, err)
	before := "[mcp_servers.tasks.env]\nX = \"1\"\n" + string(block) + "[projects.\"/p\"]\ntrust_level = \"trusted\"\n"
	before = strings.Replace(before, "[mcp_servers.tasks.env]\nX = \"1\"\nmodel = \"o3\"\n", "model = \"o3\"\n[mcp_servers.tasks.env]\nX = \"1\"\n", 1)
	out, err = config.SetBlock([]byte(before), "tasksessiond", body, ours)
	require.NoError(t, err)
	assert.Equal(t, string(block)+"[projects.\"/p\"]\ntrust_level = \"trusted\"\n", string(out))
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

func TestTOMLBlockKeepsTheUsersComments(t *testing.T) {
	// Ensures a comment the user wrote inside setup's block (setup's own
	// tables hold none) is kept when setup writes its block again or
	// takes it out.
	body := "[mcp_servers.tasks]\ncommand = \"tasksessiond\"\n"
	out, err := config.SetBlock([]byte("model = \"o3\"\n"), "tasksessiond", body, ours)
	require.NoError(t, err)
	withNote := strings.Replace(string(out), "[mcp_servers.tasks]", "# my note on tasks\n[mcp_servers.tasks]", 1)
	require.NotEqual(t, string(out), withNote)

	again, err := config.SetBlock([]byte(withNote), "tasksessiond", body, ours)
	require.NoError(t, err)
	assert.Contains(t, string(again), "# my note on tasks\n")
	back, err := config.RemoveBlock([]byte(withNote), "tasksessiond", ours)
	require.NoError(t, err)
	assert.Equal(t, "model = \"o3\"\n\n# my note on tasks\n", string(back))
}

func TestCheckTOMLInlineTables(t *testing.T) {
	// Ensures a [table] header that extends an inline table is refused
	// (Codex's TOML crate refuses it, the Go parser does not), and that
	// what only looks like one is not.
	for _, bad := range []string{
		"mcp_servers = { gh = { command = \"npx\" } }\n[mcp_servers.tasks]\ncommand = \"x\"\n",
		"[hooks]\nstate = {}\n[hooks.state.x]\n",
		"a = { b = { c = 1 } }\n[a.b.d]\n",
		"a.b = { c = 1 }\n[[a.b.d]]\n",
		"[t] # a table\n\"q.r\" = {}\n[ t . \"q.r\" . s ] # c\n",
	} {
		err := config.CheckTOML([]byte(bad))
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "inline table", bad)
	}
	for _, good := range []string{
		"a = { b = 1 }\n[c]\n[a2.b]\n",
		"[a]\nb = 1\n[a.c]\n",
		"s = \"\"\"\nx = {\n[x.y]\n\"\"\"\n",
		"[a]\nb = {}\n[c.a.b.d]\n",
	} {
		assert.NoError(t, config.CheckTOML([]byte(good)), good)
	}
}
