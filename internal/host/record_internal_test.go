package host

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

func TestRecordKeyThroughALink(t *testing.T) {
	// Ensures a file is keyed by its real path though the directories on
	// its way are not there yet (setup makes them): a project reached
	// through a link has one key before setup and after.
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(real, link))
	want := recordKey(filepath.Join(real, ".claude", "settings.json"))
	assert.Equal(t, want, recordKey(filepath.Join(link, ".claude", "settings.json")))
	require.NoError(t, os.MkdirAll(filepath.Join(link, ".claude"), 0o755))
	assert.Equal(t, want, recordKey(filepath.Join(link, ".claude", "settings.json")))
}

func TestRecordSaysNoMoreThanWasWritten(t *testing.T) {
	// Ensures a file whose write fails (a host wrote it while setup ran)
	// keeps what the record said of it before: a value the user adds
	// there later is not taken for setup's.
	home := t.TempDir()
	o := Options{Getenv: func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}}
	a, b := filepath.Join(home, "a.json"), filepath.Join(home, "b.json")
	require.NoError(t, os.WriteFile(a, []byte("{}\n"), 0o600))
	require.NoError(t, os.WriteFile(b, []byte(`{"x": 1}`), 0o600))
	p, err := NewPlan(nil, o)
	require.NoError(t, err)
	for _, f := range []string{a, b} {
		require.NoError(t, p.Declare([]Entry{{File: f, Dialect: config.JSON, Kind: UserString, Path: []string{"deny"}, Value: "TodoWrite"}}))
	}
	require.NoError(t, os.WriteFile(b, []byte(`{"x": 2}`), 0o600)) // the host's write
	err = p.Apply()
	require.ErrorContains(t, err, "changed while setup ran")
	require.ErrorContains(t, err, "already changed: "+a, "the error does not say which file was written")

	raw, err := os.ReadFile(o.RecordFile())
	require.NoError(t, err)
	var rec Record
	require.NoError(t, json.Unmarshal(raw, &rec), "the record is a flat list of edits")
	names := func(file string) bool { return slices.ContainsFunc(rec, func(e Edit) bool { return e.File == file }) }
	assert.True(t, names(recordKey(a)), "the file written is recorded")
	assert.False(t, names(recordKey(b)), "the record names edits never made")
}

func TestRecordNamesNoDirectoryNotMade(t *testing.T) {
	// Ensures a setup that fails before it writes a file in a directory
	// it was about to make leaves that directory out of its record: the
	// record said setup made it, and an uninstall would have taken a
	// directory the user made there since for setup's.
	home := t.TempDir()
	o := Options{Getenv: func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}}
	a, b := filepath.Join(home, "a.json"), filepath.Join(home, "new", "b.json")
	require.NoError(t, os.WriteFile(a, []byte("{}\n"), 0o600))
	p, err := NewPlan(nil, o)
	require.NoError(t, err)
	for _, f := range []string{a, b} {
		require.NoError(t, p.Declare([]Entry{{File: f, Dialect: config.JSON, Kind: UserString, Path: []string{"deny"}, Value: "TodoWrite"}}))
	}
	require.NoError(t, os.WriteFile(a, []byte(`{"x": 2}`), 0o600)) // the host's write
	require.ErrorContains(t, p.Apply(), "changed while setup ran")

	raw, err := os.ReadFile(o.RecordFile())
	require.NoError(t, err)
	var rec Record
	require.NoError(t, json.Unmarshal(raw, &rec))
	assert.NoDirExists(t, filepath.Dir(b))
	assert.False(t, slices.ContainsFunc(rec, func(e Edit) bool { return e.File == recordKey(filepath.Dir(b)) }), "the record names a directory setup did not make: %s", raw)
}
