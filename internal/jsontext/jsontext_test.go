package jsontext_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tasksessiond/tasksessiond/internal/jsontext"
)

func TestDuplicateFieldKey(t *testing.T) {
	// Ensures the one-scan reading of a request's keys finds a key given
	// twice however it is cased (as encoding/json fills one field from
	// either), and is not fooled by keys of nested objects or by quotes,
	// colons, commas and braces inside strings.
	for raw, want := range map[string]string{
		`{"sessionId":"a","name":"b"}`:                                    "",
		`{"sessionId":"a","sessionId":"b"}`:                               "sessionId",
		`{"sessionId":"a","SESSIONID":"b"}`:                               "SESSIONID",
		`{"kind":"a","\u212aind":"b"}`:                                    "\u212aind", // an escape: decoded, then folded
		"{\"kind\":\"a\",\"\u212aind\":\"b\"}":                            "\u212aind", // the Kelvin sign folds to k
		`{"a":{"b":1,"b":2},"c":[{"d":1},{"d":2}]}`:                       "",
		`{"a":"x\",\"a\":\"y","b":"{\"a\":1}","c":"[,:]"}`:                "",
		`{"arguments":{"subject":"s","subject":"t"},"name":"TaskCreate"}`: "",
	} {
		k, dup := jsontext.DuplicateFieldKey([]byte(raw))
		assert.Equal(t, want != "", dup, raw)
		assert.Equal(t, want, k, raw)
	}
}

func TestDepth(t *testing.T) {
	assert.Equal(t, 0, jsontext.Depth([]byte(`"[[["`)))
	assert.Equal(t, 1, jsontext.Depth([]byte(`{"a":"[[[\"{"}`)))
	assert.Equal(t, 1001, jsontext.Depth([]byte(strings.Repeat("[", 1001)+strings.Repeat("]", 1001))))
}
