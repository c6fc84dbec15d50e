package session

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDepth(t *testing.T) {
	// Ensures metadata's nesting is counted outside strings only.
	assert.Equal(t, 0, depth([]byte(`"[[["`)))
	assert.Equal(t, 1, depth([]byte(`{"a":"[[[\"{"}`)))
	assert.Equal(t, 1001, depth([]byte(strings.Repeat("[", 1001)+strings.Repeat("]", 1001))))
}
