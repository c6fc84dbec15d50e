package tools

import (
	"bytes"
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/wire"
)

// A write's result is encoded once and stored once. The log keeps what a
// retry must return and nothing twice: a change's structured result,
// without the text, which is rendered from the same data
// when the result is read back. Every other result is stored whole.

// Encode returns a result as the host receives it (full) and as the log
// keeps it (stored); the two share the structured result's encoding.
func Encode(res Result) (full, stored []byte, err error) {
	ch, ok := res.StructuredContent.(wire.Written)
	if !ok || res.IsError {
		full, err = marshal(res)
		return full, full, err
	}
	sc, err := marshal(ch)
	if err != nil {
		return nil, nil, err
	}
	text, err := marshal(res.Text())
	if err != nil {
		return nil, nil, err
	}
	stored = make([]byte, 0, len(storedHead)+len(sc)+len(resultTail))
	stored = append(append(append(stored, storedHead...), sc...), resultTail...)
	return assemble(text, sc), stored, nil
}

const (
	storedHead = `{"structuredContent":`
	resultTail = `,"isError":false}`
)

// assemble writes a change's full result around its encoded text and
// structured result.
func assemble(text, sc []byte) []byte {
	const head, mid = `{"content":[{"type":"text","text":`, `}],"structuredContent":`
	b := make([]byte, 0, len(head)+len(text)+len(mid)+len(sc)+len(resultTail))
	b = append(append(append(append(append(b, head...), text...), mid...), sc...), resultTail...)
	return b
}

// Restore turns a stored result back into the one the host received:
// a stored change gets its text again; anything else was stored whole.
func Restore(stored []byte) ([]byte, error) {
	if !bytes.HasPrefix(stored, []byte(storedHead)) || !bytes.HasSuffix(stored, []byte(resultTail)) {
		return stored, nil
	}
	sc := stored[len(storedHead) : len(stored)-len(resultTail)]
	var ch wire.Written
	if err := jsonv2.Unmarshal(sc, &ch); err != nil {
		return nil, fmt.Errorf("restore a stored result: %w", err)
	}
	text, err := marshal(writtenText(ch))
	if err != nil {
		return nil, err
	}
	return assemble(text, sc), nil
}

// marshal encodes v as every response is encoded (jsonrpc.Encode).
func marshal(v any) ([]byte, error) { return jsonrpc.Encode(nil, v) }
