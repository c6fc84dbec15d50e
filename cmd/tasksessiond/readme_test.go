package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	main "github.com/tasksessiond/tasksessiond/cmd/tasksessiond"
)

// TestREADMENamesTheJSONCommands ensures the README's list of the commands
// that take --json is exactly the commands whose help lists a -json flag,
// and that export, named apart, takes --format json.
func TestREADMENamesTheJSONCommands(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	text := strings.Join(strings.Fields(string(readme)), " ")
	m := regexp.MustCompile("`--json` is taken by (.*?) \\(`export` has `--format json`\\)").FindStringSubmatch(text)
	require.NotNil(t, m, "the README's sentence naming the commands that take --json changed: change this test with it")
	var named []string
	for _, n := range regexp.MustCompile("`([a-z]+)`").FindAllStringSubmatch(m[1], -1) {
		named = append(named, n[1])
	}
	slices.Sort(named)

	flag := regexp.MustCompile(`(?m)^\s+-json\b`)
	var taking []string
	for _, name := range main.CommandNames() {
		out, _, code := cli(t, "", name, "--help")
		if name != "help" {
			require.Equal(t, 0, code, name)
		}
		if flag.MatchString(out) {
			taking = append(taking, name)
		}
	}
	slices.Sort(taking)
	assert.Equal(t, taking, named, "the README names these commands as taking --json; their help says otherwise")

	out, _, _ := cli(t, "", "export", "--help")
	assert.Contains(t, out, "markdown or json")
}
