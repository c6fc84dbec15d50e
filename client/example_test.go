package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/daemon"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

// TestMain runs a daemon for the examples, on a temp database and socket
// named by TASKSESSIOND_SOCKET, as a host would find it.
func TestMain(m *testing.M) {
	testutil.ImpostorMain()
	dir, err := os.MkdirTemp("", "tsdx")
	if err != nil {
		log.Fatal(err)
	}
	sock := filepath.Join(dir, "x.sock")
	d, err := daemon.Open(context.Background(), daemon.Config{DB: filepath.Join(dir, "x.db"), Socket: sock, Sync: db.SyncNormal})
	if err != nil {
		log.Fatal(err)
	}
	go d.Serve()
	os.Setenv("TASKSESSIOND_SOCKET", sock)
	code := m.Run()
	d.Close(context.Background())
	os.RemoveAll(dir)
	os.Exit(code)
}

// A host's loop: start a session, give the model the tools, forward its
// tool calls (with the model's tool-call id, so a retry is safe), and
// compact when the context fills up.
func Example() {
	ctx := context.Background()
	c, err := client.Dial(ctx, os.Getenv("TASKSESSIOND_SOCKET"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// 1. Start: a session, and the tools in the provider's format.
	s, err := c.CreateSession(ctx, wire.CreateSession{Title: "refactor the parser"})
	if err != nil {
		log.Fatal(err)
	}
	tools, err := c.ListTools(ctx, "agent", "anthropic")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(tools), "tools")

	// 2. The model calls a tool: forward it, put the text in front of the model.
	res, err := c.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskCreate", CallID: "toolu_01",
		Arguments: `{"subject":"Split the lexer out"}`}) // as the provider delivered it
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())

	// A retry after a lost connection: same callId, same result, applied once.
	again, _ := c.CallTool(ctx, client.ToolCall{SessionID: s.ID, Name: "TaskCreate", CallID: "toolu_01",
		Arguments: `{"subject":"Split the lexer out"}`})
	fmt.Println(string(again.Raw) == string(res.Raw))

	// 3. Compaction: the new history starts with the messages, then the
	// forced TaskList as a tool call and its result.
	out, err := c.Compact(ctx, wire.Compact{SessionID: s.ID, Summary: "We are splitting the parser."})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range out.Messages {
		fmt.Println(m.Role, m.Kind)
	}
	var forced wire.CallToolResult
	json.Unmarshal(out.ForcedCall.Result, &forced)
	listing, _ := forced.Listing()
	fmt.Println(out.ForcedCall.Name, len(listing.Tasks), "task")

	// Later calls go to the successor; ids continue.
	next, _ := c.CallTool(ctx, client.ToolCall{SessionID: out.Session.ID, Name: "TaskCreate", Arguments: map[string]any{"subject": "Test it"}})
	change, _ := next.Written()
	fmt.Println(change.Task.Taskid)
	// Output:
	// 4 tools
	// #1 pending: Split the lexer out
	// 1 pending
	// true
	// system task_snapshot
	// system summary
	// TaskList 1 task
	// 2
}

// Errors carry the JSON-RPC code; compare with errors.Is.
func ExampleError() {
	ctx := context.Background()
	c, err := client.Dial(ctx, os.Getenv("TASKSESSIOND_SOCKET"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	_, err = c.ResumeSession(ctx, "no-such-session")
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code, errors.Is(err, client.ErrSessionNotFound))
	}
	// Output:
	// -32001 true
}
