package hosts_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tasksessiond/tasksessiond/internal/host"
	_ "github.com/tasksessiond/tasksessiond/internal/host/hosts"
)

func TestEveryHostRegisters(t *testing.T) {
	// Ensures each host package registers itself once, under its command-line name.
	assert.Equal(t, []string{"claude-code", "codex", "copilot", "gemini", "opencode", "qwen"}, host.Names())
	for _, n := range host.Names() {
		h, ok := host.Lookup(n)
		assert.True(t, ok)
		assert.NotEmpty(t, h.Title())
	}
	_, ok := host.Lookup("cursor")
	assert.False(t, ok)
}
