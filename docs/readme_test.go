package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestREADMEGoVersion(t *testing.T) {
	// Ensures the Go version the README asks of a clone is go.mod's.
	mod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	require.NotNil(t, m, "go.mod has no go line")
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	assert.Contains(t, strings.Join(strings.Fields(string(readme)), " "), "it needs Go "+string(m[1])+" ")
}
