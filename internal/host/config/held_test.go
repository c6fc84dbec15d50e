package config_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

func TestLargeMembersHeld(t *testing.T) {
	// Ensures a strict JSON file with a large member (held as its bytes,
	// not parsed) is edited to the same bytes as one parsed whole, keeps
	// its BOM and CRLF, reads and edits inside the large member when asked,
	// and is still refused when the large member is not strict JSON.
	var hist []string
	for i := range 2000 {
		hist = append(hist, fmt.Sprintf(`{"display": "prompt %d \"quoted\" {not a brace} [x]", "n": %d}`, i, i))
	}
	big := "[\n      " + strings.Join(hist, ",\n      ") + "\n    ]"
	for _, file := range []string{
		"{\n  \"numStartups\": 3,\n  \"projects\": {\"/a\": {\"history\": " + big + "}},\n  \"mcpServers\": {}\n}\n",
		"\ufeff{\r\n  \"projects\": {\"/a\": {\"history\": " + strings.ReplaceAll(big, "\n", "\r\n") + "}}\r\n}\r\n",
		"{\"projects\": " + big + "}",
	} {
		edit := func(d config.Dialect) string {
			doc, err := config.ParseJSON([]byte(file), d)
			require.NoError(t, err)
			require.NoError(t, doc.Set([]string{"mcpServers", "tasks"}, map[string]any{"command": "tasksessiond"}))
			return string(doc.Bytes())
		}
		held, whole := edit(config.JSON), edit(config.JSONC) // JSONC is parsed whole
		assert.Equal(t, whole, held)

		doc, err := config.ParseJSON([]byte(file), config.JSON)
		require.NoError(t, err)
		assert.Equal(t, file, string(doc.Bytes()), "unedited, the bytes as they were")
		if strings.Contains(file, "/a") {
			require.True(t, doc.Get([]string{"projects", "/a", "history"}, &[]any{}))
			require.NoError(t, doc.Set([]string{"projects", "/a", "seen"}, true))
			assert.Contains(t, string(doc.Bytes()), `"seen": true`)
		} else {
			require.True(t, doc.Get([]string{"projects"}, &[]any{}))
		}
	}
	bad := "{\"projects\": [" + strings.Repeat(`"x", `, 20000) + "\"y\" /* a comment */]}"
	_, err := config.ParseJSON([]byte(bad), config.JSON)
	assert.Error(t, err, "a comment in a large member of a strict JSON file")
}
