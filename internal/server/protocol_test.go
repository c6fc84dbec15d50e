package server_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tasksessiond/tasksessiond/internal/server"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

func TestProtocolDocumentsEveryMethod(t *testing.T) {
	// Ensures docs/PROTOCOL.md documents exactly the methods served.
	doc, err := os.ReadFile("../../docs/PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^### `([a-z]+/[a-zA-Z]+)`").FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, m[1])
	}
	srv := server.New(session.NewManager(testutil.MustOpenDB(t), nil), server.Config{})
	assert.ElementsMatch(t, srv.Methods(), documented)
}
