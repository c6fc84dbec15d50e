package transcript_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/host/transcript"
)

// use and result are transcript lines as Claude Code 2.1.328 writes them.
func use(at, id, tool, input string, sidechain bool) string {
	return fmt.Sprintf(`{"isSidechain":%v,"type":"assistant","timestamp":"2026-12-04T16:47:%s","message":{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":%q,"input":%s}]}}`, sidechain, at, id, tool, input)
}

func result(at, id string, sidechain bool, toolUseResult string) string {
	extra := ""
	if toolUseResult != "" {
		extra = `,"toolUseResult":` + toolUseResult
	}
	return fmt.Sprintf(`{"isSidechain":%v,"type":"user","timestamp":"2026-12-04T16:47:%s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":"ok"}]}%s}`, sidechain, at, id, extra)
}

func write(t *testing.T, path string, lines ...string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
}

func names(t *testing.T, path string) []string {
	t.Helper()
	calls, err := transcript.Calls(context.Background(), path, "tasks")
	require.NoError(t, err)
	var out []string
	for _, c := range calls {
		out = append(out, fmt.Sprintf("%s %s", c.Name, c.Arguments))
	}
	return out
}

func TestCallsIncludeSubagents(t *testing.T) {
	// Ensures the Task calls of a conversation are read with those of its
	// subagents (<session>/subagents/agent-<id>.jsonl, isSidechain), in
	// the order made: a foreground subagent's between the Agent call and
	// its result, a background one's by time beside its parent's; that a
	// fork's copied history finds its subagents in its source's directory;
	// that a call copied into a forked subagent's history counts once; and
	// that a call without a result is left out.
	dir := t.TempDir()
	main := filepath.Join(dir, "A.jsonl")
	lines := []string{
		use("01.000Z", "t1", "mcp__tasks__TaskCreate", `{"subject":"One"}`, false),
		result("01.100Z", "t1", false, ""),
		use("02.000Z", "agent1", "Agent", `{"prompt":"go"}`, false),
		result("05.000Z", "agent1", false, `{"status":"completed","agentId":"a1"}`),
		use("06.000Z", "t4", "mcp__tasks__TaskCreate", `{"subject":"Three"}`, false),
		result("06.100Z", "t4", false, ""),
		use("07.000Z", "t5", "mcp__tasks__TaskCreate", `{"subject":"cut off"}`, false),
	}
	write(t, main, lines...)
	write(t, filepath.Join(dir, "A", "subagents", "agent-a1.jsonl"),
		use("03.000Z", "t2", "mcp__tasks__TaskUpdate", `{"taskid":1,"status":"inprogress"}`, true),
		result("03.100Z", "t2", true, ""),
		use("04.000Z", "t3", "mcp__tasks__TaskCreate", `{"subject":"Two"}`, true),
		result("04.100Z", "t3", true, ""),
		// a forked subagent's copy of its parent's history
		use("01.000Z", "t1", "mcp__tasks__TaskCreate", `{"subject":"One"}`, true),
	)
	want := []string{
		`TaskCreate {"subject":"One"}`,
		`TaskUpdate {"taskid":1,"status":"inprogress"}`,
		`TaskCreate {"subject":"Two"}`,
		`TaskCreate {"subject":"Three"}`,
	}
	assert.Equal(t, want, names(t, main))

	// A fork: the same history under a new id, the subagent's file in A's directory.
	fork := filepath.Join(dir, "F.jsonl")
	write(t, fork, lines[:6]...)
	assert.Equal(t, want, names(t, fork))

	// The older layout: sidechain entries in the conversation's own file.
	old := filepath.Join(dir, "O.jsonl")
	write(t, old,
		use("01.000Z", "o1", "mcp__tasks__TaskCreate", `{"subject":"One"}`, false),
		result("01.100Z", "o1", false, ""),
		use("02.000Z", "o2", "mcp__tasks__TaskCreate", `{"subject":"Two"}`, true),
		result("02.100Z", "o2", true, ""),
	)
	assert.Equal(t, []string{`TaskCreate {"subject":"One"}`, `TaskCreate {"subject":"Two"}`}, names(t, old))
}

func TestCallsFromACodexRollout(t *testing.T) {
	// Ensures the Task calls of a Codex CLI rollout are read from its
	// item_completed events (an MCP call whole: server, tool, arguments,
	// status), the failed ones marked, other servers' and tools' left out.
	item := func(at, id, server, tool, args, status string, isError bool) string {
		return fmt.Sprintf(`{"timestamp":"2026-12-04T16:53:%s","type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":%q,"server":%q,"tool":%q,"arguments":%s,"status":%q,"result":{"content":[],"isError":%v}}}}`,
			at, id, server, tool, args, status, isError)
	}
	path := filepath.Join(t.TempDir(), "rollout-2026-12-04T16-53-13-x.jsonl")
	write(t, path,
		`{"timestamp":"2026-12-04T16:53:01.000Z","type":"response_item","payload":{"type":"function_call","name":"TaskCreate","namespace":"mcp__tasks","arguments":"{\"subject\":\"One\"}","call_id":"call_1"}}`,
		item("01.100Z", "call_1", "tasks", "TaskCreate", `{"subject":"One"}`, "completed", false),
		item("02.100Z", "call_2", "tasks", "TaskUpdate", `{"taskid":9,"status":"completed"}`, "failed", true),
		item("03.100Z", "call_3", "other", "TaskCreate", `{"subject":"not ours"}`, "completed", false),
		item("04.100Z", "call_4", "tasks", "TaskUpdate", `{"taskid":1,"status":"inprogress"}`, "completed", false),
	)
	calls, err := transcript.Calls(context.Background(), path, "tasks")
	require.NoError(t, err)
	var got []string
	for _, c := range calls {
		got = append(got, fmt.Sprintf("%s %s %s %v", c.CallID, c.Name, c.Arguments, c.IsError))
	}
	assert.Equal(t, []string{
		`codex-call_1 TaskCreate {"subject":"One"} false`,
		`codex-call_2 TaskUpdate {"taskid":9,"status":"completed"} true`,
		`codex-call_4 TaskUpdate {"taskid":1,"status":"inprogress"} false`,
	}, got)
}

func TestCallsOfACodexFork(t *testing.T) {
	// Ensures a Codex fork's rollout, which names its source thread and
	// the first line of the source's rollout it does not share
	// (session_meta forked_from_id, forked_from_ordinal_exclusive), is read
	// with the source's calls before the fork point, and its own after.
	item := func(ordinal int, at, id, args string) string {
		return fmt.Sprintf(`{"timestamp":"2026-12-04T16:53:%s","ordinal":%d,"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":%q,"server":"tasks","tool":"TaskCreate","arguments":%s,"status":"completed","result":{"isError":false}}}}`,
			at, ordinal, id, args)
	}
	sessions := t.TempDir()
	source := filepath.Join(sessions, "2026", "12", "03", "rollout-2026-12-03T10-00-00-AAA.jsonl")
	write(t, source,
		`{"timestamp":"2026-12-03T10:00:00.000Z","ordinal":1,"type":"session_meta","payload":{"id":"AAA"}}`,
		item(2, "01.000Z", "c1", `{"subject":"One"}`),
		item(3, "02.000Z", "c2", `{"subject":"Two"}`),
		item(5, "05.000Z", "c5", `{"subject":"after the fork, in the source"}`),
	)
	fork := filepath.Join(sessions, "2026", "12", "04", "rollout-2026-12-04T10-00-00-BBB.jsonl")
	write(t, fork,
		`{"timestamp":"2026-12-04T16:53:06.000Z","ordinal":4,"type":"session_meta","payload":{"id":"BBB","forked_from_id":"AAA","forked_from_ordinal_exclusive":4}}`,
		item(6, "07.000Z", "c7", `{"subject":"in the fork"}`),
	)
	calls, err := transcript.Calls(context.Background(), fork, "tasks")
	require.NoError(t, err)
	var got []string
	for _, c := range calls {
		got = append(got, fmt.Sprintf("%s", c.Arguments))
	}
	assert.Equal(t, []string{`{"subject":"One"}`, `{"subject":"Two"}`, `{"subject":"in the fork"}`}, got)
}
