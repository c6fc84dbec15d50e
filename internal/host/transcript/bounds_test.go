package transcript

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

const (
	use    = `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"u1","name":"mcp__tasks__TaskCreate","input":{"subject":"a"}}]}}` + "\n"
	result = `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"u1","content":"ok"}]}}` + "\n"
)

// within fails the test if f has not returned when the failsafe passes: a
// reader that blocks would otherwise hang the test binary.
func within(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("still reading after a minute: blocked")
	}
}

func TestReadsRegularFilesOnly(t *testing.T) {
	// Ensures a transcript_path that is not a regular file (a FIFO no one
	// writes, /dev/zero, a directory) is refused at once, without a read
	// that blocks or never ends.
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, path := range []string{fifo, "/dev/zero", t.TempDir()} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			within(t, func() {
				_, err := Calls(ctx, path, "tasks")
				assert.ErrorContains(t, err, "is not a regular file")
				assert.False(t, Seen(ctx, path, "x"))
			})
		})
	}
}

func TestReadsAtMostWhatItNeeds(t *testing.T) {
	// Ensures a transcript over the bound is not read whole: Calls refuses
	// it at once, and Seen reads only its end, where the marker after the
	// last compaction is (a sparse file: no disk is used).
	path := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = f.WriteString(use + result + `{"type":"system","subtype":"compact_boundary"}` + "\n")
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("\n"+`{"context":"the list, marker-123"}`+"\n"), 4*maxTranscript)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	calls, err := Calls(ctx, path, "tasks")
	assert.ErrorContains(t, err, "over the 268435456 read")
	assert.Empty(t, calls)
	assert.True(t, Seen(ctx, path, "marker-123"))
	assert.False(t, Seen(ctx, path, "marker-456"))
}

func TestStopsWhenTold(t *testing.T) {
	// Ensures a read stops when its context ends (the hook's timeout,
	// SIGTERM), even while the file is still being read.
	path := filepath.Join(t.TempDir(), "t.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(use+result), 0o600))
	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err := Calls(done, path, "tasks")
	assert.ErrorIs(t, err, context.Canceled)
	assert.False(t, Seen(done, path, "tool_use"))

	calls, err := Calls(ctx, path, "tasks")
	require.NoError(t, err)
	assert.Len(t, calls, 1)
}

func TestLongLinesAreSkipped(t *testing.T) {
	// Ensures a line over the bound is read past, not held, and the calls
	// around it are still found.
	path := filepath.Join(t.TempDir(), "t.jsonl")
	long := `{"type":"user","tool_":"` + strings.Repeat("x", maxLine) + `"}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(long+use+long+result), 0o600))
	calls, err := Calls(ctx, path, "tasks")
	require.NoError(t, err)
	require.Len(t, calls, 1)
	assert.Equal(t, "TaskCreate", calls[0].Name)
}

func TestSeenAcrossChunks(t *testing.T) {
	// Ensures Seen finds the marker after the last boundary wherever the
	// chunks it reads in fall: across a chunk's end, and a boundary after
	// the marker hides it.
	marker := "(tasksessiond session s, list 1234abcd)"
	boundary := `{"type":"system","subtype":"compact_boundary"}`
	for _, at := range []int{0, chunk - 10, chunk - 1, chunk, 2*chunk - 20} {
		for _, tc := range []struct {
			name, before, after string
			seen                bool
		}{
			{"marker", "", marker, true},
			{"marker after boundary", boundary, marker, true},
			{"boundary after marker", marker, boundary, false},
		} {
			text := strings.Repeat("y", at) + tc.before + "\n" + tc.after + "\n"
			path := filepath.Join(t.TempDir(), "t.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
			assert.Equal(t, tc.seen, Seen(ctx, path, marker), "%s at %d", tc.name, at)
		}
	}
}
