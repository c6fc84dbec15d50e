package host_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tasksessiond/tasksessiond/internal/host"
)

func TestCommandWords(t *testing.T) {
	// Ensures a hook's command line setup writes is read back as the same
	// words, quoted where a shell needs it.
	for _, words := range [][]string{
		{"tasksessiond", "hook", "codex"},
		{"/home/a b/bin/tasksessiond", "hook", "gemini", "--session", "it's mine"},
	} {
		line := host.Command(words...)
		assert.Equal(t, words, host.Words(line), line)
	}
	assert.Equal(t, "tasksessiond hook claude-code --socket /tmp/x.sock", host.Command("tasksessiond", "hook", "claude-code", "--socket", "/tmp/x.sock"))
	assert.Equal(t, []string{"/opt/tsd", "hook", "codex"}, host.Words(`"/opt/tsd" hook codex`))
}

func TestRunsTasksessiond(t *testing.T) {
	// Ensures setup knows its own entries (tasksessiond by name, or the
	// binary it was given) and no one else's.
	assert.True(t, host.RunsTasksessiond([]string{"tasksessiond", "hook", "codex"}, "", "hook", "codex"))
	assert.True(t, host.RunsTasksessiond([]string{"/old/path/tasksessiond", "mcp", "--socket", "s"}, "", "mcp"))
	assert.True(t, host.RunsTasksessiond([]string{"/x/wrapper", "mcp"}, "/x/wrapper", "mcp"))
	assert.False(t, host.RunsTasksessiond([]string{"tasksessiond", "hook", "gemini"}, "", "hook", "codex"))
	assert.False(t, host.RunsTasksessiond([]string{"other-server"}, "", "mcp"))
	assert.False(t, host.RunsTasksessiond(nil, "", "mcp"))
}

func TestOptionsArgs(t *testing.T) {
	// Ensures the bridge and the hook get the same daemon and session.
	o := host.Options{Socket: "/s", DB: "/d", Session: "work"}
	assert.Equal(t, []string{"mcp", "--socket", "/s", "--db", "/d", "--session", "work", "--create"}, o.MCPArgs())
	assert.Equal(t, []string{"hook", "codex", "--socket", "/s", "--db", "/d", "--session", "work"}, o.HookArgs("codex"))
	assert.Equal(t, map[string]any{"TASKSESSIOND_SOCKET": "/s", "TASKSESSIOND_DB": "/d"}, o.MCPEnv())
	assert.Nil(t, host.Options{}.MCPEnv())
}

func TestDecodeJSONTakesALineCommentAtTheEnd(t *testing.T) {
	// Ensures doctor reads a settings file that ends in a // comment
	// without a newline, as strip-json-comments and jsonc-parser read it
	// (hujson wants the newline): doctor once called it unreadable.
	var v struct{ A int }
	for _, in := range []string{"{\"a\": 1} // mine", "{\"a\": 1,}\n// mine", "// mine\n{\"a\": 1}\n"} {
		v.A = 0
		if err := host.DecodeJSON([]byte(in), &v); err != nil || v.A != 1 {
			t.Errorf("%q: %v, a = %d", in, err, v.A)
		}
	}
	if err := host.DecodeJSON([]byte("{\"a\": 1} /* open"), &v); err == nil {
		t.Error("an unclosed block comment was read")
	}
}
