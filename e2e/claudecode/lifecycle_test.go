package claudecode_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/claudecode"
	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// since returns the main requests after the first n.
func since(h *claudecode.Host, n int) []*modelapi.Request { return h.API.Main()[n:] }

// hookMarker opens the last line of the hook's context: "(tasksessiond
// session S, list <hash>)", by which the hook knows a list is in the
// conversation already.
const hookMarker = "(tasksessiond session "

var markerRE = regexp.MustCompile(`\(tasksessiond session ([^,]+), list ([0-9a-f]+)\)`)

// markers returns every hook marker in what the request shows the model.
func markers(r *modelapi.Request) []string { return markerRE.FindAllString(r.ConversationText(), -1) }

// hookContexts returns the SessionStart hook contexts in a request, as
// Claude Code passed them on: each from "SessionStart hook additional
// context" to the end of its system-reminder. Claude Code puts them in a
// text block of a user message, or, after a compaction in the middle of a
// turn, appends them to the pending tool result.
func hookContexts(r *modelapi.Request) []string {
	const open = "SessionStart hook additional context"
	var out []string
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			if b.Type != modelapi.BlockText && b.Type != modelapi.BlockToolResult {
				continue
			}
			for text := b.Text; ; {
				i := strings.Index(text, open)
				if i < 0 {
					break
				}
				text = text[i:]
				j := strings.Index(text, "</system-reminder>")
				if j < 0 {
					j = len(text)
				}
				out = append(out, text[:j])
				text = text[j:]
			}
		}
	}
	return out
}

// replaced are the forms in which Claude Code hands the model something
// too large instead of the thing itself: a preview and the path of a file
// the model cannot see.
var replaced = []string{"<persisted-output>", "<truncated-output>", "Output too large", "Full output saved to",
	"exceeds maximum allowed tokens", "output truncated", "tool-results/"}

func assertWhole(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range replaced {
		assert.NotContains(t, text, s, "%s reached the model replaced by Claude Code (%q): %.600s", what, s, text)
	}
}

// lastHook returns the last hook run; it fails the test if there is none.
func lastHook(t *testing.T, h *claudecode.Host) claudecode.HookRun {
	t.Helper()
	runs := h.Hooks()
	require.NotEmpty(t, runs, "the SessionStart hook never ran")
	return runs[len(runs)-1]
}

// createTasks creates n tasks in session id through the daemon's client,
// not through the model (fast), with descriptions of descLen characters.
func createTasks(t *testing.T, h *claudecode.Host, id string, n, descLen int) {
	t.Helper()
	h.Daemon.CreateTasks(t, id, n, descLen, "Task number %03d")
}

// callTool makes one Task call in session id through the daemon's client.
func callTool(t *testing.T, h *claudecode.Host, id, name string, args map[string]any) {
	t.Helper()
	h.Daemon.Call(t, id, name, args)
}
