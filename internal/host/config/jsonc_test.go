package config_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// edit is what setup does to a settings file: a member set, an element
// appended, both under objects that may be missing.
func edit(t testing.TB, d *config.Doc) {
	require.NoError(t, d.Set([]string{"tools", "todowrite"}, false))
	require.NoError(t, d.Append([]string{"hooks", "SessionStart"}, map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "tasksessiond hook x"}}}))
	require.NoError(t, d.Append([]string{"permissions", "allow"}, "mcp__tasks"))
}

// undo is what uninstall does.
func undo(d *config.Doc) {
	d.Delete([]string{"tools", "todowrite"}, 0)
	d.RemoveIf([]string{"hooks", "SessionStart"}, 0, func(raw []byte) bool { return bytes.Contains(raw, []byte("tasksessiond hook x")) })
	d.RemoveIf([]string{"permissions", "allow"}, 0, func(raw []byte) bool { return string(raw) == `"mcp__tasks"` })
}

func TestEditKeepsTheFile(t *testing.T) {
	// Ensures setup's edit keeps every byte of a user's file it does not
	// change (comments, order, layout, CRLF, a BOM), gives a file that
	// parses in the host's dialect, changes nothing the second time, and
	// that undoing it gives the original bytes back.
	cases := map[string]struct {
		dialect config.Dialect
		text    string
		want    string // the edited file, when the case pins it
	}{
		"CommentAfterLastMember": {config.JSONC, "{\n  \"tools\": {\n    \"bash\": true // keep the shell\n  }\n}\n",
			"{\n  \"tools\": {\n    \"bash\": true, // keep the shell\n    \"todowrite\": false\n  },\n  \"hooks\": {\n    \"SessionStart\": [\n      {\n        \"hooks\": [\n          {\n            \"command\": \"tasksessiond hook x\",\n            \"type\": \"command\"\n          }\n        ]\n      }\n    ]\n  },\n  \"permissions\": {\n    \"allow\": [\n      \"mcp__tasks\"\n    ]\n  }\n}\n"},
		"TrailingCommas":          {config.JSONC, "{\n\t\"model\": \"x\",\n\t\"tools\": {\"bash\": true,},\n\t\"permissions\": {\"allow\": [\"Bash\",],},\n}\n", ""},
		"BlockComments":           {config.JSONComments, "/* settings */\n{\n  /* the model */ \"model\": \"x\" /* after */\n  /* before the end */\n}\n", ""},
		"CRLFAndBOM":              {config.JSONComments, "\ufeff{\r\n  // mine\r\n  \"a\": [1, 2], // two\r\n  \"hooks\": {\"Stop\": []}\r\n}\r\n", ""},
		"Empty":                   {config.JSON, "", "{\n  \"tools\": {\n    \"todowrite\": false\n  },\n  \"hooks\": {\n    \"SessionStart\": [\n      {\n        \"hooks\": [\n          {\n            \"command\": \"tasksessiond hook x\",\n            \"type\": \"command\"\n          }\n        ]\n      }\n    ]\n  },\n  \"permissions\": {\n    \"allow\": [\n      \"mcp__tasks\"\n    ]\n  }\n}\n"},
		"OneLine":                 {config.JSON, `{"a": 1, "permissions": {"allow": ["Bash"]}}`, ""},
		"ExistingHooks":           {config.JSON, "{\n    \"hooks\": {\n        \"SessionStart\": [\n            {\"hooks\": [{\"type\": \"command\", \"command\": \"other\"}]}\n        ]\n    }\n}", ""},
		"CommentOnlyObject":       {config.JSONC, "{\n  \"tools\": {\n    // none yet\n  }\n}\n", ""},
		"BlockCommentEndsTheLine": {config.JSONC, "{\"a\": [1 /* c */], \"b\": 1 /* d */}", ""},
		"BlockCommentThenSpace":   {config.JSONC, "{\"a\": [1 /* c */  ], \"b\": 1 /* d */ }", ""},
		// a // comment may end the file: the hosts' readers take it without a newline
		"LineCommentAtTheEnd":     {config.JSONComments, "{\n  \"a\": 1\n} // mine", ""},
		"LineCommentAtTheEndCRLF": {config.JSONC, "{\r\n  \"a\": 1\r\n}\r\n// mine", ""},
		// an empty container on one line with a comment in it, and a root so
		"OneLineCommentOnlyObject": {config.JSONC, "{\n  \"tools\": { /* none */ },\n  \"hooks\": {\"SessionStart\": [ /* x */ ]}\n}\n", ""},
		"OneLineCommentOnlyRoot":   {config.JSONC, "/* a */ { /* b */ } /* c */", ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			d, err := config.ParseJSON([]byte(c.text), c.dialect)
			require.NoError(t, err)
			edit(t, d)
			out := d.Bytes()
			if c.want != "" {
				assert.Equal(t, c.want, string(out))
			}
			_, err = config.ParseJSON(out, c.dialect)
			require.NoError(t, err, "%s", out)
			assert.True(t, subsequence([]byte(c.text), out), "a byte of the original is gone:\n%s", out)
			if strings.Contains(c.text, "\r\n") {
				assert.NotContains(t, strings.ReplaceAll(string(out), "\r\n", ""), "\n", "a line without CR:\n%q", out)
			}
			if strings.HasPrefix(c.text, "\ufeff") {
				assert.True(t, strings.HasPrefix(string(out), "\ufeff"))
			}
			again, err := config.ParseJSON(out, c.dialect)
			require.NoError(t, err)
			edit(t, again)
			assert.Equal(t, string(out), string(again.Bytes()), "a second edit changed the file")
			undo(again)
			if c.text == "" {
				assert.True(t, again.IsEmpty(), "%s", again.Bytes())
				return
			}
			assert.Equal(t, c.text, string(again.Bytes()), "undo did not give the original back")
		})
	}
}

func TestParseRefuses(t *testing.T) {
	// Ensures a file the host would not read is refused, saying why.
	for _, c := range []struct {
		dialect config.Dialect
		text    string
		why     string
	}{
		{config.JSON, "{\"a\": 1, // c\n}", "not strict JSON"},
		{config.JSONComments, "{\"a\": 1,}", "trailing comma"},
		{config.JSONC, "{\"a\": 1,, }", "JSONC"},
		{config.JSONC, "[1]", "not a JSON object"},
		{config.JSONC, `{"tools": {"bash": true,, // keep the shell` + "\n}}", "JSONC"},
	} {
		_, err := config.ParseJSON([]byte(c.text), c.dialect)
		require.Error(t, err, c.text)
		assert.Contains(t, err.Error(), c.why)
	}
}

func TestGet(t *testing.T) {
	// Ensures values are read through comments.
	d, err := config.ParseJSON([]byte("{\"a\": {\"b\": [1, /* two */ 2]}}"), config.JSONC)
	require.NoError(t, err)
	var got []int
	require.True(t, d.Get([]string{"a", "b"}, &got))
	assert.Equal(t, []int{1, 2}, got)
	assert.False(t, d.Get([]string{"a", "c"}, &got))
	assert.Equal(t, []string{"b"}, d.Members([]string{"a"}))
}

// subsequence reports whether every byte of a is in b, in order.
func subsequence(a, b []byte) bool {
	i := 0
	for _, c := range b {
		if i < len(a) && a[i] == c {
			i++
		}
	}
	return i == len(a)
}

func standard(t testing.TB, b []byte) any {
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

func TestRemoveFirstOnALine(t *testing.T) {
	// Ensures an element taken from the front of a one-line array leaves
	// the next where it stood: no space after the bracket.
	for in, want := range map[string]string{
		`{"deny": ["TaskCreate", "Mine"]}`:                `{"deny": ["Mine"]}`,
		`{"deny": [ "TaskCreate", "Mine" ]}`:              `{"deny": [ "Mine" ]}`,
		`{"deny": ["TaskCreate", "X", "Mine"]}`:           `{"deny": ["Mine"]}`,
		"{\"deny\": [\n  \"TaskCreate\",\n  \"Mine\"\n]}": "{\"deny\": [\n  \"Mine\"\n]}",
	} {
		d, err := config.ParseJSON([]byte(in), config.JSON)
		require.NoError(t, err)
		d.RemoveIf([]string{"deny"}, 1, func(raw []byte) bool { return string(raw) != `"Mine"` })
		assert.Equal(t, want, string(d.Bytes()), in)
	}
}

func TestRemoveAfterALineComment(t *testing.T) {
	// Ensures an item taken out after a // comment (on the line before it,
	// or on lines of its own) leaves a file that parses, the comment kept:
	// the next item on the removed one's line, or the closing bracket, does
	// not end up inside the comment, nor is a /* comment */ cut at a newline
	// within it. A comment on the item's own line goes with it.
	for in, want := range map[string]string{
		"{\"a\": 1, // c\n  \"b\": 2, \"c\": 3}": "{\"a\": 1, // c\n  \"c\": 3}",
		"{\"x\": [1, // c\n  2, 3]}":             "{\"x\": [1, // c\n  3]}",
		"{\"x\": [1, // c\n  2, /* k */ 3]}":     "{\"x\": [1, // c\n  /* k */ 3]}",
		"{\"x\": [1, // c\n  2]}":                "{\"x\": [1 // c\n]}",
		"{\"x\": [ // c\n  2]}":                  "{\"x\": [ // c\n]}",
		"{\"x\": [1,\n  2, 3]}":                  "{\"x\": [1,\n  3]}",
		"{\"x\": [1, 2, 3]}":                     "{\"x\": [1, 3]}",
		"{\"x\": [\n  1,\n  2, // two\n  3\n]}":  "{\"x\": [\n  1, // two\n  3\n]}",
		"{\"x\": [1,\n  // mine\n  2]}":          "{\"x\": [1\n  // mine\n]}",
		"{\"x\": [1, // c\n  // mine\n  2\n]}":   "{\"x\": [1 // c\n  // mine\n]}",
		"{\"x\": [1,\n  /* a\n  b */ 2\n]}":      "{\"x\": [1\n]}",
		"{\"x\": [\n  /* x */ 2]}":               "{\"x\": []}",
	} {
		d, err := config.ParseJSON([]byte(in), config.JSONC)
		require.NoError(t, err)
		if len(d.Members(nil)) == 3 {
			d.Delete([]string{"b"}, 0)
		} else {
			d.RemoveIf([]string{"x"}, 1, func(raw []byte) bool { return string(raw) == "2" })
		}
		out := d.Bytes()
		_, err = config.ParseJSON(out, config.JSONC)
		require.NoError(t, err, "%q -> %q", in, out)
		assert.Equal(t, want, string(out), in)
	}
}
