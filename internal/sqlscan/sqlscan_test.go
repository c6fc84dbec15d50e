package sqlscan_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/internal/sqlscan"
)

func TestScan(t *testing.T) {
	// Ensures NULL reads as "", text comes as a string or bytes from either
	// driver, and a column of another type is an error, not a silent "".
	var s string
	require.NoError(t, (*sqlscan.NullText)(&s).Scan("id"))
	assert.Equal(t, "id", s)
	require.NoError(t, (*sqlscan.NullText)(&s).Scan(nil))
	assert.Equal(t, "", s)
	var j json.RawMessage
	require.NoError(t, (*sqlscan.JSON)(&j).Scan([]byte(`{"a":1}`)))
	assert.JSONEq(t, `{"a":1}`, string(j))
	assert.Error(t, (*sqlscan.NullText)(&s).Scan(int64(3)))
	assert.Error(t, (*sqlscan.JSON)(&j).Scan(nil), "a JSON column is never NULL")
}
