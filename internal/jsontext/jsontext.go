// Package jsontext checks JSON text for what Go's decoder would quietly
// accept and change or pick: bytes that are not UTF-8 and lone UTF-16
// surrogate escapes (decoded as U+FFFD), and a key given twice (the last
// one wins in Go, the first in SQLite's json_extract).
package jsontext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Check reports text that JSON cannot carry faithfully: bytes that are
// not UTF-8, and \u escapes of lone UTF-16 surrogates. line is valid JSON,
// so a backslash occurs only inside a string, starting an escape.
func Check(line []byte) error {
	if !utf8.Valid(line) {
		i := 0
		for i < len(line) {
			r, n := utf8.DecodeRune(line[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return fmt.Errorf("the message is not valid UTF-8 (byte %#x at offset %d); send text as UTF-8", line[i], i)
	}
	for i := bytes.IndexByte(line, '\\'); i >= 0 && i < len(line); {
		if line[i+1] != 'u' {
			i += 2
		} else {
			r := hex4(line[i+2 : i+6])
			switch {
			case utf16.IsSurrogate(r) && r < 0xdc00 && i+12 <= len(line) && line[i+6] == '\\' && line[i+7] == 'u' &&
				utf16.DecodeRune(r, hex4(line[i+8:i+12])) != utf8.RuneError:
				i += 12
			case utf16.IsSurrogate(r):
				return fmt.Errorf("the message holds a lone UTF-16 surrogate %s at offset %d, which is no character; escape a character outside the BMP as a surrogate pair", line[i:i+6], i)
			default:
				i += 6
			}
		}
		next := bytes.IndexByte(line[i:], '\\')
		if next < 0 {
			break
		}
		i += next
	}
	return nil
}

func hex4(b []byte) rune {
	n, _ := strconv.ParseUint(string(b), 16, 32)
	return rune(n)
}

// DuplicateKey reports the first key that occurs twice at the top level of
// the valid JSON object raw, which decoded to distinct keys (-1: unknown).
// It counts the keys in one pass without allocating; only when there are
// more than distinct does it decode to name the duplicate.
func DuplicateKey(raw []byte, distinct int) (string, bool) {
	return duplicateKey(raw, distinct, func(k string) string { return k })
}

// DuplicateFieldKey is DuplicateKey for an object decoded into a Go struct,
// whose fields match keys without regard to case ("sessionId" and
// "SESSIONID" set one field, the last one winning).
//
// It runs on every request, so it reads the keys with one scan and no
// decoder; only a key with an escape in it sends it to the decoder.
func DuplicateFieldKey(raw []byte) (string, bool) {
	keys, plain := topKeys(raw)
	if !plain {
		return duplicateKey(raw, -1, fold)
	}
	for i := range keys {
		for j := range i {
			if strings.EqualFold(keys[i], keys[j]) { // Unicode simple folding, as encoding/json matches
				return keys[i], true
			}
		}
	}
	return "", false
}

// topKeys returns the keys at the top level of the valid JSON object raw,
// as written; plain is false when one holds an escape (so it must be
// decoded to be compared).
func topKeys(raw []byte) (keys []string, plain bool) {
	d, start, expectKey := 0, -1, false
	for i := 0; i < len(raw); i++ {
		switch b := raw[i]; {
		case start >= 0 || (b == '"' && d == 1 && expectKey):
			if start < 0 {
				start = i + 1
				continue
			}
			switch b {
			case '\\':
				return nil, false
			case '"':
				keys = append(keys, string(raw[start:i]))
				start, expectKey = -1, false
			}
		case b == '"':
			// A string that is not a top-level key: skip it whole.
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		case b == '{' || b == '[':
			d++
			expectKey = d == 1
		case b == '}' || b == ']':
			d--
		case b == ',' && d == 1:
			expectKey = true
		}
	}
	return keys, true
}

// Depth is the deepest nesting of objects and arrays in the JSON text b.
func Depth(b []byte) int {
	d, deepest, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}

// fold maps s to one representative of its case-folding class, as
// encoding/json matches keys to fields (ſ is s, the Kelvin sign is k).
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}

func duplicateKey(raw []byte, distinct int, norm func(string) string) (string, bool) {
	if distinct >= 0 && topLevelKeys(raw) == distinct {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	seen := make(map[string]bool)
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", false
		}
		k, _ := t.(string)
		if seen[norm(k)] {
			return k, true
		}
		seen[norm(k)] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// topLevelKeys counts the members of the valid JSON object raw: the colons
// at depth one outside strings.
func topLevelKeys(raw []byte) int {
	n, depth, inString := 0, 0, false
	for i := 0; i < len(raw); i++ {
		b := raw[i]
		if inString {
			switch b {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ':':
			if depth == 1 {
				n++
			}
		}
	}
	return n
}
