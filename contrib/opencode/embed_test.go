package opencode_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tasksessiond/tasksessiond/contrib/opencode"
)

func TestReleasedHoldsThePlugin(t *testing.T) {
	// Ensures the plugin as it is now is among the released versions
	// (setup replaces and removes those, and leaves another file there):
	// a change to tasksessiond.ts adds its sum to released.
	assert.True(t, opencode.Released(opencode.Plugin), "add the plugin's sha256sum to released in embed.go")
	assert.False(t, opencode.Released(append([]byte("// mine\n"), opencode.Plugin...)))
}
