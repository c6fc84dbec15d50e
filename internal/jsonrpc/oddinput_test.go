package jsonrpc_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/wire"
)

func TestNameTwiceDeeperThenTextJSONCannotCarry(t *testing.T) {
	// Ensures that a name given twice deeper, then text JSON cannot carry,
	// is the parse error the same text gets anywhere else, not a name
	// "given twice" made of tokens the decoder could not read.
	for _, line := range []string{
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":1,\"a\":2},\"\xff\":1}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":1,\"a\":2},\"\\ud800\":1}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":1,\"a\":2},\"x\":\"\xff\"}",
	} {
		_, errs, _, perr := jsonrpc.Parse([]byte(line), 0)
		require.Nil(t, perr)
		require.Len(t, errs, 1)
		assert.NotContains(t, errs[0].Error.Message, "invalid jsontext.Token", "%q", line)
		assert.EqualValues(t, wire.CodeParseError, errs[0].Error.Code, "%q: %s", line, errs[0].Error.Message)
	}
}

func TestBatchOverTheBoundIsRefusedWhole(t *testing.T) {
	// Ensures a batch over the bound is refused as a whole, counted before
	// any element is read (a line of half a million scalars once cost an
	// error response each first), and one at the bound is read.
	line := []byte("[" + strings.Repeat("1,", jsonrpc.DefaultMaxLine/2-1) + "1]")
	reqs, errs, batch, perr := jsonrpc.Parse(line, 256)
	require.NotNil(t, perr)
	assert.True(t, batch)
	assert.Empty(t, reqs)
	assert.Empty(t, errs)
	assert.EqualValues(t, wire.CodeInvalidRequest, perr.Code)
	assert.Contains(t, perr.Message, "at most 256 requests and this one holds 524288")

	_, errs, _, perr = jsonrpc.Parse([]byte("["+strings.Repeat("1,", 255)+"1]"), 256)
	require.Nil(t, perr)
	assert.Len(t, errs, 256)
}
