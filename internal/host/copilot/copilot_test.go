package copilot_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/hook"
	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/copilot"
	"github.com/tasksessiond/tasksessiond/internal/testutil"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestCalls(t *testing.T) {
	// Ensures the Task calls of events.jsonl are read in order, those of
	// the server named only, each with its outcome; a call without one is
	// left out.
	calls, err := copilot.Calls(context.Background(), "testdata/events.jsonl", "tasks")
	require.NoError(t, err)
	require.Len(t, calls, 3)
	assert.Equal(t, "TaskCreate", calls[0].Name)
	assert.JSONEq(t, `{"description":"d","subject":"Write the parser"}`, string(calls[0].Arguments.(json.RawMessage)))
	assert.False(t, calls[0].IsError)
	assert.Equal(t, "TaskUpdate", calls[1].Name)
	assert.True(t, calls[1].IsError, "a call that failed is marked so")
	assert.Equal(t, "copilot-c5", calls[2].CallID)

	all, err := copilot.Calls(context.Background(), "testdata/events.jsonl", "")
	require.NoError(t, err)
	assert.Len(t, all, 4, "with no server named, any server's Task tools")
}

// fixture is a real daemon on a real socket and the hook's Config aimed at it.
type fixture struct {
	c   *client.Client
	cfg hook.Config
	env host.Env
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	d := testutil.StartDaemon(t, testutil.MustOpenDB(t))
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o700))
	home := t.TempDir()
	return &fixture{
		c: d.Dial(t),
		cfg: hook.Config{Dial: func(ctx context.Context) (*client.Client, error) {
			return client.Dial(ctx, d.Socket)
		}},
		env: host.Env{Getenv: func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		}, RuntimeDir: dir},
	}
}

func (f *fixture) hook(t *testing.T, in string) any {
	t.Helper()
	out, err := copilot.Host{}.Hook(context.Background(), f.cfg, f.env, strings.NewReader(in))
	if err != nil {
		require.ErrorIs(t, err, hook.ErrNothing)
		return nil
	}
	return out
}

func (f *fixture) context(t *testing.T, in string) string {
	t.Helper()
	out := f.hook(t, in)
	if out == nil {
		return ""
	}
	b, err := json.Marshal(out)
	require.NoError(t, err)
	var o struct {
		AdditionalContext string `json:"additionalContext"`
	}
	require.NoError(t, json.Unmarshal(b, &o))
	return o.AdditionalContext
}

func TestPreMcpToolCall(t *testing.T) {
	// Ensures preMcpToolCall names the session in the call's _meta, keeping
	// what was there, for the server's calls only.
	f := newFixture(t)
	out := f.hook(t, `{"sessionId":"S1","toolCallId":"c1","serverName":"tasks","toolName":"TaskCreate","arguments":{},"_meta":{"x":1}}`)
	b, err := json.Marshal(out)
	require.NoError(t, err)
	assert.JSONEq(t, `{"metaToUse":{"x":1,"copilot/sessionId":"S1"}}`, string(b))
	assert.Equal(t, "S1", copilot.Host{}.Conversation(map[string]any{"x": 1, "copilot/sessionId": "S1"}))
	assert.Nil(t, f.hook(t, `{"sessionId":"S1","serverName":"other","toolName":"TaskCreate","arguments":{}}`), "another server's call keeps its _meta")
	assert.Nil(t, f.hook(t, `{"sessionId":"A1","serverName":"tasks","toolName":"TaskCreate","arguments":{},"agentId":"A1","parentAgentId":"S1"}`),
		"a subagent's call is not named after the subagent's session")
}

func TestCompactionOwesTheListOnce(t *testing.T) {
	// Ensures preCompact compacts the session and owes the list; the next
	// userPromptSubmitted hands it over (the successor's, tool names as
	// Copilot CLI shows them) and the one after it does not.
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.c.CreateSession(ctx, wire.CreateSession{SessionID: "S1"})
	require.NoError(t, err)
	_, err = f.c.CallTool(ctx, client.ToolCall{SessionID: "S1", Name: "TaskCreate", Arguments: map[string]any{"subject": "Write the parser"}})
	require.NoError(t, err)

	assert.Empty(t, f.context(t, `{"sessionId":"S1","prompt":"go"}`), "nothing is owed before a compaction")
	assert.Nil(t, f.hook(t, `{"sessionId":"S1","transcriptPath":"/nowhere/events.jsonl","trigger":"auto","customInstructions":""}`))
	head, err := f.c.Head(ctx, "S1")
	require.NoError(t, err)
	assert.NotEqual(t, "S1", head.ID, "preCompact compacted the session")

	got := f.context(t, `{"sessionId":"S1","prompt":"go on"}`)
	assert.Contains(t, got, "Task list carried over from before the context was compacted")
	assert.Contains(t, got, "tasks-TaskList was called for you")
	assert.Contains(t, got, "#1 [pending] Write the parser")
	assert.Contains(t, got, "tasks-TaskCreate gets #2")
	assert.Empty(t, f.context(t, `{"sessionId":"S1","prompt":"again"}`), "delivered once")
}

func TestSessionStartDeliversWhatIsOwed(t *testing.T) {
	// Ensures a list owed since a compaction is handed over by the next
	// run's sessionStart (resume), and a startup of an unknown session
	// adds nothing.
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.c.CreateSession(ctx, wire.CreateSession{SessionID: "S2"})
	require.NoError(t, err)
	_, err = f.c.CallTool(ctx, client.ToolCall{SessionID: "S2", Name: "TaskCreate", Arguments: map[string]any{"subject": "Alpha"}})
	require.NoError(t, err)
	f.hook(t, `{"sessionId":"S2","transcriptPath":"x","trigger":"manual"}`)
	got := f.context(t, `{"sessionId":"S2","source":"resume","initialPrompt":"go"}`)
	assert.Contains(t, got, "carried over")
	assert.Contains(t, got, "#1 [pending] Alpha")
	assert.Empty(t, f.context(t, `{"sessionId":"S3","source":"new"}`))
}

func TestSetupKnowsAnEarlierSetupsHooksFile(t *testing.T) {
	// Ensures setup replaces a hooks file an earlier setup wrote (another
	// --bin) though its record does not name it, and refuses one the
	// user has put a hook of their own in.
	home := t.TempDir()
	o := host.Options{Bin: "/new/tasksessiond", Getenv: func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}}
	file := filepath.Join(home, ".copilot", "hooks", "tasksessiond.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	earlier := `{"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "/old/tasksessiond hook copilot", "timeoutSec": 30}]}}`
	require.NoError(t, os.WriteFile(file, []byte(earlier), 0o644))
	p, err := copilot.Host{}.Plan(o)
	require.NoError(t, err)
	assert.True(t, p.Changed())

	mine := `{"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "/old/tasksessiond hook copilot"}, {"type": "command", "bash": "my-hook"}]}}`
	require.NoError(t, os.WriteFile(file, []byte(mine), 0o644))
	_, err = copilot.Host{}.Plan(o)
	assert.ErrorContains(t, err, "a file setup did not write is there")
}
