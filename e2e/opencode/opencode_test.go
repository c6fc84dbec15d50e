package opencode_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
	"github.com/tasksessiond/tasksessiond/e2e/opencode"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

// The plugin's tools, as OpenCode names them to the model: the tool keys.
var taskTools = []string{"TaskCreate", "TaskList", "TaskGet", "TaskUpdate"}

// since returns the main requests after the first n.
func since(h *opencode.Host, n int) []*modelapi.Request { return h.API.Main()[n:] }

// result returns the one tool result of a request's last user message.
func result(t *testing.T, r *modelapi.Request, name string) string {
	t.Helper()
	got := r.PendingToolResults()
	require.Len(t, got, 1, "request %d", r.Seq)
	require.Equal(t, name, got[0].Name, "request %d", r.Seq)
	return got[0].Text
}

func ctx10(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestFourTools ensures OpenCode offers the model the plugin's four tools,
// with the daemon's descriptions and argument schemas, and not its own
// to-do tools; that each call reaches the daemon in the session named by
// OpenCode's session id and its result's text is what the model reads
// next; that a mistake the daemon reports reaches the model as an error it
// can fix; and that each write carries OpenCode's message and tool call id
// as its callId (sent again, it is not applied twice).
func TestFourTools(t *testing.T) {
	t.Parallel()
	script := modelapi.NewScript(
		modelapi.Call("TaskCreate", map[string]any{"subject": "Write the parser"}),
		modelapi.Call("TaskCreate", map[string]any{"subject": "Test the parser", "description": "fuzz it too"}),
		modelapi.Call("TaskUpdate", map[string]any{"taskid": 1, "status": "inprogress"}),
		modelapi.Call("TaskGet", map[string]any{"taskid": 2}),
		modelapi.Call("TaskUpdate", map[string]any{"taskid": 9, "status": "completed"}),
		modelapi.Call("TaskList", nil),
		modelapi.Text("Two tasks planned."),
	)
	// The user's opencode.json has comments (JSONC): setup edits it
	// in place, and OpenCode reads the result (no todowrite below).
	h := opencode.New(t, opencode.Options{Respond: script.Respond, Commented: true})
	cfg, err := os.ReadFile(filepath.Join(h.Config, "opencode.json"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(cfg), "// OpenCode settings"), "the comment is kept:\n%s", cfg)
	assert.Contains(t, string(cfg), `"todowrite": false`)
	run := h.Run(t, "Plan the parser work.")
	assert.Equal(t, "Two tasks planned.", run.Text)
	require.True(t, script.Done(), "the script was not played to its end:\n%s", h.API.Dump())
	assert.Empty(t, h.API.Unscripted())
	require.True(t, strings.HasPrefix(run.SessionID, "ses_"), run.SessionID)

	main := h.API.Main()
	require.Len(t, main, 7, h.API.Dump())
	assert.Equal(t, "Plan the parser work.", main[0].FirstUserText())
	assert.Len(t, h.API.Of(modelapi.KindTitle), 1, "OpenCode asks for a title at a session's first turn")

	// The tools: the plugin's four, with the daemon's descriptions and
	// schemas; OpenCode's to-do tools are off (the installer's fragment).
	c := h.Daemon.Client(t)
	defs, err := c.ListTools(ctx10(t), "", "mcp")
	require.NoError(t, err)
	require.Len(t, defs, 4)
	for _, r := range main {
		for _, name := range taskTools {
			assert.True(t, r.HasTool(name), "request %d does not offer %s: %v", r.Seq, name, r.ToolNames())
		}
		assert.False(t, r.HasTool("todowrite"), "request %d offers todowrite", r.Seq)
		assert.False(t, r.HasTool("todoread"), "request %d offers todoread", r.Seq)
	}
	for _, raw := range defs {
		var def struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"inputSchema"`
		}
		require.NoError(t, json.Unmarshal(raw, &def))
		offered, ok := main[0].Tool(def.Name)
		require.True(t, ok, def.Name)
		assert.Equal(t, def.Description, offered.Description, "%s: the plugin's description differs from the daemon's", def.Name)
		var schema map[string]any
		require.NoError(t, json.Unmarshal(offered.InputSchema, &schema))
		assert.Equal(t, schemaCore(def.InputSchema), schemaCore(schema), "%s: the plugin's argument schema differs from the daemon's", def.Name)
	}

	// Each result is the very next request's tool result: the daemon's
	// text content.
	for i, want := range []string{"TaskCreate", "TaskCreate", "TaskUpdate", "TaskGet", "TaskUpdate", "TaskList"} {
		result(t, main[i+1], want)
	}
	assert.Contains(t, result(t, main[1], "TaskCreate"), "#1 pending: Write the parser")
	assert.Contains(t, result(t, main[2], "TaskCreate"), "#2 pending: Test the parser")
	assert.Contains(t, result(t, main[3], "TaskUpdate"), "#1 inprogress: Write the parser")
	got := result(t, main[4], "TaskGet")
	assert.Contains(t, got, "Test the parser")
	assert.Contains(t, got, "fuzz it too")
	// A mistake is an error result: the plugin throws its text, which
	// OpenCode gives the model as it is, marking the call failed.
	bad := result(t, main[5], "TaskUpdate")
	assert.True(t, strings.HasPrefix(bad, "Error: "), bad)
	assert.Contains(t, bad, "no task has taskid 9")
	updates := run.Tools("TaskUpdate")
	require.Len(t, updates, 2)
	assert.Equal(t, "completed", updates[0].Status)
	assert.Equal(t, "error", updates[1].Status)
	listed := result(t, main[6], "TaskList")
	assert.Contains(t, listed, "#1 [inprogress] Write the parser\n#2 [pending] Test the parser")

	// The same text, whole, from the daemon: the model reads a result's
	// text content, nothing else.
	res, err := c.CallTool(ctx10(t), client.ToolCall{SessionID: run.SessionID, Name: "TaskList"})
	require.NoError(t, err)
	assert.Equal(t, res.Text(), listed)

	// The daemon holds them in the session named by OpenCode's id, made by
	// the plugin.
	s := h.Daemon.Resume(t, run.SessionID)
	assert.Equal(t, run.SessionID, s.Session.ID)
	assert.Contains(t, string(s.Session.Metadata), `"host":"opencode"`)
	assert.Equal(t, []string{"1 inprogress Write the parser", "2 pending Test the parser"}, h.Daemon.Subjects(t, run.SessionID))
	assert.Equal(t, 3, s.NextTaskid)

	// Writes carry "opencode:<message id>:<tool call id>" as callId: sent
	// again, the first TaskCreate returns its recorded result and adds
	// nothing.
	creates := run.Tools("TaskCreate")
	require.Len(t, creates, 2)
	first := creates[0]
	assert.Equal(t, "toolu_e2e_2_1", first.CallID, "OpenCode's tool call id is the model's")
	again, err := c.CallTool(ctx10(t), client.ToolCall{SessionID: run.SessionID, Name: "TaskCreate",
		Arguments: map[string]any{"subject": "Write the parser"}, CallID: "opencode:" + first.MessageID + ":" + first.CallID})
	require.NoError(t, err)
	assert.Equal(t, first.Output, again.Text(), "the recorded result of the model's first TaskCreate")
	assert.Len(t, h.Daemon.Subjects(t, run.SessionID), 2, "a resent write was applied again")
}

// schemaCore is what a tool's argument schema says of its arguments:
// properties (type, enum, lengths, minimum, description) and required.
// ($schema, additionalProperties and an integer's maximum are how a
// schema library writes it, which OpenCode's zod and the daemon's Go do
// differently.)
func schemaCore(s map[string]any) map[string]any {
	props := map[string]any{}
	if p, ok := s["properties"].(map[string]any); ok {
		for name, v := range p {
			prop := map[string]any{}
			for k, x := range v.(map[string]any) {
				switch k {
				case "type", "enum", "minLength", "maxLength", "minimum", "description":
					prop[k] = x
				}
			}
			props[name] = prop
		}
	}
	req := []string{}
	if r, ok := s["required"].([]any); ok {
		for _, x := range r {
			req = append(req, x.(string))
		}
	}
	return map[string]any{"type": s["type"], "properties": props, "required": req}
}

// TestContinueAndNew ensures "opencode run --session ID" comes back to the
// same list (TaskList returns it, the next TaskCreate continues the ids),
// and that a new session starts with an empty list of its own.
func TestContinueAndNew(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := opencode.New(t, opencode.Options{Respond: p.Respond})
	p.Set(modelapi.NewScript(
		modelapi.Call("TaskCreate", map[string]any{"subject": "Write the parser"}),
		modelapi.Call("TaskCreate", map[string]any{"subject": "Test the parser"}),
		modelapi.Text("Planned."),
	))
	a := h.Run(t, "Plan the parser work.").SessionID

	// A new session: an empty list, ids from #1.
	n := len(h.API.Main())
	p.Set(modelapi.NewScript(
		modelapi.Call("TaskList", nil),
		modelapi.Call("TaskCreate", map[string]any{"subject": "Elsewhere"}),
		modelapi.Text("Fresh."),
	))
	b := h.Run(t, "Something else.").SessionID
	require.NotEqual(t, a, b)
	main := since(h, n)
	require.Len(t, main, 3, h.API.Dump())
	assert.Equal(t, "The task list is empty. Use TaskCreate to plan the work.", result(t, main[1], "TaskList"))
	assert.NotContains(t, main[1].ConversationText(), "Write the parser")
	assert.Contains(t, result(t, main[2], "TaskCreate"), "#1 pending: Elsewhere")

	// Back to the first: the same list, ids go on.
	n = len(h.API.Main())
	p.Set(modelapi.NewScript(
		modelapi.Call("TaskList", nil),
		modelapi.Call("TaskCreate", map[string]any{"subject": "Ship it"}),
		modelapi.Text("Three tasks now."),
	))
	res := h.Run(t, "Where are we?", "--session", a)
	assert.Equal(t, a, res.SessionID)
	main = since(h, n)
	require.Len(t, main, 3, h.API.Dump())
	assert.Contains(t, main[0].ConversationText(), "Plan the parser work.", "the continued session's history")
	assert.Contains(t, result(t, main[1], "TaskList"), "#1 [pending] Write the parser\n#2 [pending] Test the parser")
	assert.NotContains(t, result(t, main[1], "TaskList"), "Elsewhere")
	assert.Contains(t, result(t, main[2], "TaskCreate"), "#3 pending: Ship it")

	assert.Equal(t, []string{"1 pending Write the parser", "2 pending Test the parser", "3 pending Ship it"}, h.Daemon.Subjects(t, a))
	assert.Equal(t, []string{"1 pending Elsewhere"}, h.Daemon.Subjects(t, b))
}
