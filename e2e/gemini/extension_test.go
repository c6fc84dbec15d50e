package gemini_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/gemini"
	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// extension installs the repository's Gemini CLI extension
// (gemini-extension.json, hooks/hooks.json) into h, with tasksessiond on
// PATH as npm puts it there.
func extension(t *testing.T, h *gemini.Host) *gemini.Extended {
	t.Helper()
	root, err := harness.RepoRoot()
	require.NoError(t, err)
	return gemini.UseExtension(t, h, root, true)
}

// TestExtensionLifecycle ensures the repository's extension, installed
// with "gemini extensions install <dir>", gives the model the four tools
// (as mcp_tasks_*; the user's one setting allows them) and keeps the list
// through startup, resume (the SessionStart hook's list, naming the tools
// so, ids going on) and compression (the BeforeModel hook appends the
// list to the summary; ids go on), its hooks and MCP server being the
// extension's runs of tasksessiond.
func TestExtensionLifecycle(t *testing.T) {
	t.Parallel()
	var p modelapi.Phases
	h := extension(t, gemini.New(t, gemini.Options{Respond: p.Respond, NoHook: true}))

	// startup
	p.Set(modelapi.NewScript(
		modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Alpha one"}), call(gemini.TaskCreate, map[string]any{"subject": "Alpha two"})),
		modelapi.Text("ok"),
	))
	a := h.Run(t, "Plan A.").SessionID
	m := h.API.Main()
	require.Len(t, m, 2, h.API.Dump())
	assert.Contains(t, pending(m[1])[gemini.TaskCreate][1].Text, "#2 pending: ")
	runs := strings.Join(h.Runs(), "\n")
	assert.Contains(t, runs, "hook gemini", "the extension's hooks")
	assert.Contains(t, runs, "mcp", "the extension's MCP server")
	require.NotEmpty(t, h.Hooks("SessionStart"))
	assert.Equal(t, "startup", h.Hooks("SessionStart")[0].Source)

	// resume
	n := len(h.API.Main())
	p.Set(modelapi.NewScript(
		modelapi.Calls(call(gemini.TaskList, nil)),
		modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Alpha three"})),
		modelapi.Text("ok"),
	))
	h.Run(t, "Go on.", "--resume", a)
	m = h.API.Main()[n:]
	require.Len(t, m, 3, h.API.Dump())
	prompt := m[0].LastUserText()
	assert.Contains(t, prompt, "#2 [pending] Alpha two", "the resume hook's list")
	assert.Contains(t, prompt, gemini.TaskUpdate, "the hook names the tools as the model knows them")
	assert.Contains(t, result(t, m[1], gemini.TaskList), "Alpha one")
	assert.Contains(t, result(t, m[2], gemini.TaskCreate), "#3 pending: ")

	// compression, in the middle of a turn (as TestAutoCompression)
	n = len(h.API.Main())
	p.Set(modelapi.NewScript(
		modelapi.Reply{
			ToolUses: []modelapi.ToolUse{call(gemini.TaskUpdate, map[string]any{"taskid": 1, "status": "in_progress"})},
			Usage:    &modelapi.Usage{InputTokens: 600_000, OutputTokens: 20},
		},
		modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Alpha four"})),
		modelapi.Text("Done."),
	))
	h.Run(t, "Start.", "--resume", a)
	require.NotEmpty(t, h.API.Of(modelapi.KindCompact), "Gemini CLI compressed the history:\n%s", h.API.Dump())
	m = h.API.Main()[n:]
	require.Len(t, m, 3, h.API.Dump())
	assert.Contains(t, m[1].ConversationText(), "<state_snapshot>")
	var summary string
	for _, msg := range m[1].Messages {
		if strings.Contains(msg.Text(), "<state_snapshot>") {
			summary = msg.Text()
		}
	}
	// The list as it is now (the resume hook's, before the turn's
	// TaskUpdate, is in the turn's prompt), in the summary's message.
	assert.Contains(t, summary, listMarker(a), "the BeforeModel hook's list is not in the summary's message")
	assert.Contains(t, summary, "#1 [inprogress] Alpha one")
	assert.Contains(t, result(t, m[2], gemini.TaskCreate), "#4 pending: ")
	assert.Equal(t, []string{"#1 inprogress Alpha one", "#2 pending Alpha two", "#3 pending Alpha three", "#4 pending Alpha four"},
		tasks(h.Daemon.Resume(t, a).Tasks))
}

// TestExtensionClear ensures /clear under the extension starts the new
// session's list empty (the extension's SessionStart hook rebinds the
// extension's MCP server) and leaves the old list whole.
func TestExtensionClear(t *testing.T) {
	t.Parallel()
	h := extension(t, gemini.New(t, gemini.Options{NoHook: true, Respond: modelapi.Steps(
		&modelapi.Step{Match: modelapi.LastUserContains("Plan A."), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Alpha one"}))
		}},
		&modelapi.Step{Match: modelapi.LastUserContains("Plan B."), Once: true, Reply: func(*modelapi.Request) modelapi.Reply {
			return modelapi.Calls(call(gemini.TaskList, nil), call(gemini.TaskCreate, map[string]any{"subject": "Beta one"}))
		}},
		&modelapi.Step{Match: modelapi.IsKind(modelapi.KindMain), Reply: func(*modelapi.Request) modelapi.Reply { return modelapi.Text("Noted.") }},
	)}))
	term := h.Interactive(t)
	// The extension's MCP server connects after the prompt shows; on a
	// loaded machine typing before it has may be lost.
	term.WaitFor(120*time.Second, "Gemini CLI to finish initializing", func(s string) bool { return !strings.Contains(s, "Initializing") })
	submit(t, term, "Plan A.", func() bool { return len(h.API.Main()) > 0 })
	term.WaitForText(60*time.Second, "Noted.")
	starts := h.Hooks("SessionStart")
	require.Len(t, starts, 1)
	a := starts[0].SessionID
	require.Equal(t, []string{"#1 pending Alpha one"}, tasks(h.Daemon.Resume(t, a).Tasks))

	submit(t, term, "/clear", func() bool { return len(h.Hooks("SessionStart")) >= 2 })
	c := h.Hooks("SessionStart")[1].SessionID
	require.NotEqual(t, a, c, "/clear makes a new session id")
	n := len(h.API.Main())
	submit(t, term, "Plan B.", func() bool { return len(h.API.Main()) > n })
	h.API.Wait(t, 60*time.Second, "the results of Plan B.'s calls", func(rs []*modelapi.Request) bool {
		for _, r := range rs[min(n, len(rs)):] {
			if len(pending(r)[gemini.TaskCreate]) > 0 {
				return true
			}
		}
		return false
	})
	var last *modelapi.Request
	for _, r := range h.API.Main()[n:] {
		if len(pending(r)[gemini.TaskCreate]) > 0 {
			last = r
		}
	}
	require.NotNil(t, last)
	assert.Contains(t, result(t, last, gemini.TaskList), "The task list is empty")
	assert.Contains(t, result(t, last, gemini.TaskCreate), "#1 pending: ")
	assert.Equal(t, []string{"#1 pending Alpha one"}, tasks(h.Daemon.Resume(t, a).Tasks))
	assert.Equal(t, []string{"#1 pending Beta one"}, tasks(h.Daemon.Resume(t, c).Tasks))
}

// TestExtensionFromReleaseArchive ensures this platform's release archive
// ({platform}.{arch}.tasksessiond.tar.gz, the asset Gemini CLI's install
// from a GitHub release picks) is an extension that runs its own binary:
// unpacked and installed with nothing named tasksessiond on PATH, the
// model's TaskCreate reaches the daemon and gets #1, and a resume gets the
// hook's list.
func TestExtensionFromReleaseArchive(t *testing.T) {
	t.Parallel()
	archive := harness.ReleaseArchive(t)
	dir := t.TempDir()
	out, err := exec.Command("tar", "-xzf", archive, "-C", dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var p modelapi.Phases
	h := gemini.UseExtension(t, gemini.New(t, gemini.Options{Respond: p.Respond, NoHook: true}), dir, false)
	_, err = exec.LookPath("tasksessiond")
	require.Error(t, err, "a tasksessiond is on the test's PATH: the extension could be running it")

	p.Set(modelapi.NewScript(
		modelapi.Calls(call(gemini.TaskCreate, map[string]any{"subject": "Alpha one"})),
		modelapi.Text("ok"),
	))
	a := h.Run(t, "Plan A.").SessionID
	m := h.API.Main()
	require.Len(t, m, 2, h.API.Dump())
	assert.Contains(t, result(t, m[1], gemini.TaskCreate), "#1 pending: ")
	assert.Empty(t, h.Runs(), "the extension ran a tasksessiond from PATH")

	n := len(h.API.Main())
	p.Set(modelapi.NewScript(modelapi.Text("ok")))
	h.Run(t, "Go on.", "--resume", a)
	m = h.API.Main()[n:]
	require.Len(t, m, 1)
	assert.Contains(t, m[0].LastUserText(), "#1 [pending] Alpha one", "the archive's SessionStart hook's list")
	assert.Equal(t, []string{"#1 pending Alpha one"}, tasks(h.Daemon.Resume(t, a).Tasks))
}

// TestExtensionTurnsOffWriteTodos ensures the extension turns Gemini CLI's
// own write_todos off, as setup does ("useWriteTodos": false), so the model
// keeps one list: Gemini CLI reads the extension's excludeTools ("gemini
// extensions list" shows it) and does not offer write_todos. (The pinned
// CLI offers the harness's model no write_todos in -p mode even without
// it, so the list of tools alone would not tell.)
func TestExtensionTurnsOffWriteTodos(t *testing.T) {
	t.Parallel()
	script := modelapi.NewScript(modelapi.Text("Hello."))
	h := extension(t, gemini.New(t, gemini.Options{Respond: script.Respond, NoHook: true}))
	out := h.Command(t, 60*time.Second, "extensions", "list")
	require.NoError(t, out.Err, "%s%s", out.Stdout, out.Stderr)
	assert.Regexp(t, `Excluded tools:\s+write_todos`, out.Stdout+out.Stderr)
	h.Run(t, "Hello.", "--approval-mode", "yolo")
	m := h.API.Main()
	require.Len(t, m, 1, h.API.Dump())
	assert.True(t, m[0].HasTool(gemini.TaskCreate), "%s not offered: %v", gemini.TaskCreate, m[0].ToolNames())
	assert.False(t, m[0].HasTool("write_todos"), "Gemini CLI's own write_todos is offered beside the extension's tools: %v", m[0].ToolNames())
}
