package server_test

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/server"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestProtocolDocumentsEveryMethod(t *testing.T) {
	// Ensures the methods served, the methods package wire declares and
	// the methods docs/PROTOCOL.md documents are the same, and that each
	// method's section names every field of its params as wire declares
	// them.
	doc, err := os.ReadFile("../../docs/PROTOCOL.md")
	require.NoError(t, err)
	heading := regexp.MustCompile("(?m)^### `([a-z]+/[a-zA-Z]+)`")
	sections := map[string]string{}
	locs := heading.FindAllSubmatchIndex(doc, -1)
	for i, loc := range locs {
		end := len(doc)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		sections[string(doc[loc[2]:loc[3]])] = string(doc[loc[1]:end])
	}
	var declared []string
	for _, m := range wire.Methods {
		declared = append(declared, m.Name)
		section, ok := sections[m.Name]
		if !assert.True(t, ok, "%s is not documented", m.Name) {
			continue
		}
		for _, field := range jsonFields(reflect.TypeOf(m.Params)) {
			assert.Contains(t, section, field, "the section of %s does not name its param %q", m.Name, field)
		}
	}
	srv := server.New(session.NewManager(testutil.MustOpenDB(t), nil), server.Config{})
	assert.ElementsMatch(t, srv.Methods(), declared, "served and declared")
	assert.Len(t, sections, len(declared), "documented and declared")
}

// jsonFields lists the JSON names of a struct's fields.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}
