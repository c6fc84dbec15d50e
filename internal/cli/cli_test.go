package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/cli"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
)

func TestMarkdown(t *testing.T) {
	got := cli.Markdown(client.Session{ID: "s", Title: "Refactor"}, []client.Task{
		{Taskid: 1, Status: "completed", Subject: "Read the code"},
		{Taskid: 2, Status: "inprogress", Subject: "Split the parser", Description: "lexer first\nthen the rest"},
		{Taskid: 3, Status: "pending", Subject: "Write tests"},
		{Taskid: 4, Status: "deleted", Subject: "Rewrite in Rust"},
	})
	assert.Equal(t, "# Refactor\n\n"+
		"- [x] #1 Read the code\n"+
		"- [ ] #2 Split the parser (in progress)\n  lexer first\n  then the rest\n"+
		"- [ ] #3 Write tests\n"+
		"- [ ] #4 ~~Rewrite in Rust~~ (deleted)\n", got)
	assert.Equal(t, "# Session x\n\n_No tasks._\n", cli.Markdown(client.Session{ID: "x"}, nil))
}

func TestParseArgs(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	j := fs.Bool("json", false, "")
	n := fs.Int("n", 0, "")
	pos, err := cli.ParseArgs(fs, []string{"a", "--json", "b", "-n", "3", "--", "-c"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "-c"}, pos)
	assert.True(t, *j)
	assert.Equal(t, 3, *n)
}

func TestLineageOrder(t *testing.T) {
	// Ensures lineage lists a chain oldest first whichever generation it is
	// asked from.
	ctx := context.Background()
	dm := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	c := dm.Dial(t)
	_, err := c.CreateSession(ctx, client.CreateSession{SessionID: "g1"})
	require.NoError(t, err)
	_, err = c.Compact(ctx, client.Compact{SessionID: "g1", NewSessionID: "g2"})
	require.NoError(t, err)
	_, err = c.Compact(ctx, client.Compact{SessionID: "g2", NewSessionID: "g3"})
	require.NoError(t, err)

	for _, from := range []string{"g1", "g2", "g3"} {
		var out bytes.Buffer
		code := cli.Lookup("lineage").Run(ctx, &cli.Env{Stdout: &out, Stderr: io.Discard}, []string{"--socket", dm.Socket, "--json", from})
		require.Equal(t, 0, code)
		var chain []client.Session
		require.NoError(t, json.Unmarshal(out.Bytes(), &chain))
		var ids []string
		for _, s := range chain {
			ids = append(ids, s.ID)
		}
		assert.Equal(t, []string{"g1", "g2", "g3"}, ids, "from %s", from)
	}
}
