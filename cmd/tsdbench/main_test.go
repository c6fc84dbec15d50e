package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHelp(t *testing.T) {
	// Ensures --help prints the usage, the flags and examples, exit 0, and
	// that an unknown flag is a usage error (2).
	var out, errOut bytes.Buffer
	assert.Equal(t, 0, run(context.Background(), []string{"--help"}, &out, &errOut))
	assert.Contains(t, errOut.String()+out.String(), "Usage: go run ./cmd/tsdbench")
	assert.Contains(t, errOut.String()+out.String(), "-baseline")
	errOut.Reset()
	assert.Equal(t, 2, run(context.Background(), []string{"--nope"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "flag provided but not defined")
}
