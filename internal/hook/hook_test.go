package hook_test

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/hook"
)

func TestReadInput(t *testing.T) {
	// Ensures ReadInput decodes Claude Code's SessionStart JSON (ignoring
	// the fields the hook does not read), takes an input of exactly 1 MiB,
	// and refuses with a clear error an input that is not JSON, is empty,
	// is over 1 MiB, or cannot be read.
	const valid = `{"session_id":"5f1c2d3e","transcript_path":"/home/u/.claude/projects/p/5f1c2d3e.jsonl",` +
		`"cwd":"/home/u/p","hook_event_name":"SessionStart","source":"resume","permission_mode":"default"}`
	// A valid input padded with spaces (JSON whitespace) to n bytes.
	padded := func(n int) string { return valid + strings.Repeat(" ", n-len(valid)) }

	for _, tc := range []struct {
		name    string
		input   string
		want    hook.Input
		wantErr string
	}{
		{name: "valid", input: valid, want: hook.Input{SessionID: "5f1c2d3e", HookEventName: "SessionStart", Source: "resume",
			Cwd: "/home/u/p", TranscriptPath: "/home/u/.claude/projects/p/5f1c2d3e.jsonl"}},
		{name: "exactly 1 MiB", input: padded(1 << 20), want: hook.Input{SessionID: "5f1c2d3e", HookEventName: "SessionStart",
			Source: "resume", Cwd: "/home/u/p", TranscriptPath: "/home/u/.claude/projects/p/5f1c2d3e.jsonl"}},
		{name: "over 1 MiB", input: padded(1<<20 + 1), wantErr: "hook input is over 1048576 bytes"},
		{name: "over 1 MiB by far", input: `{"session_id":"` + strings.Repeat("a", 3<<20) + `"}`, wantErr: "hook input is over 1048576 bytes"},
		{name: "not JSON", input: `{"session_id":`, wantErr: "hook input is not the JSON Claude Code sends"},
		{name: "not an object", input: `["SessionStart"]`, wantErr: "hook input is not the JSON Claude Code sends"},
		{name: "a field of the wrong type", input: `{"session_id":42}`, wantErr: "hook input is not the JSON Claude Code sends"},
		{name: "empty", input: "", wantErr: "hook input is not the JSON Claude Code sends"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := hook.ReadInput(strings.NewReader(tc.input), "Claude Code")
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				assert.Equal(t, hook.Input{}, got, "nothing decoded from a refused input")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}

	t.Run("unreadable", func(t *testing.T) {
		boom := errors.New("stdin broke")
		_, err := hook.ReadInput(iotest.ErrReader(boom), "Claude Code")
		require.ErrorIs(t, err, boom)
		assert.ErrorContains(t, err, "read hook input")
	})
}
