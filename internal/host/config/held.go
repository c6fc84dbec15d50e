package config

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tailscale/hujson"
)

// A strict JSON file may be tens of megabytes (Claude Code's state file
// keeps every project's prompt history) of which setup reads and edits a
// few small members. Parsing it whole costs seconds and a gigabyte of
// tree, so a large top-level member is held as its bytes, checked with
// encoding/json, stood in the tree by a placeholder string, and parsed
// only when an edit looks into it; Bytes puts the held bytes back.

// heldFrom is the size from which a top-level member's value is held.
const heldFrom = 64 << 10

// heldMark starts every placeholder; a file holding it is parsed whole.
const heldMark = `"\u0000tasksessiond-held-`

// hold returns b with each large top-level member's value replaced by a
// placeholder, and the values by placeholder; ok false when b is not an
// object it can scan (the full parse then says why) or holds nothing
// large.
func hold(b []byte) (skeleton []byte, held map[string][]byte, ok bool) {
	if len(b) < heldFrom || bytes.Contains(b, []byte(heldMark)) {
		return nil, nil, false
	}
	spans, ok := topMembers(b)
	if !ok {
		return nil, nil, false
	}
	held = map[string][]byte{}
	var out []byte
	last := 0
	for _, s := range spans {
		if s[1]-s[0] < heldFrom {
			continue
		}
		if !json.Valid(b[s[0]:s[1]]) {
			return nil, nil, false
		}
		mark := fmt.Sprintf(`%s%d"`, heldMark, len(held))
		held[mark] = b[s[0]:s[1]]
		out = append(append(out, b[last:s[0]]...), mark...)
		last = s[1]
	}
	if len(held) == 0 {
		return nil, nil, false
	}
	return append(out, b[last:]...), held, true
}

// expand parses the held member at obj.Members[i] into the tree.
func (d *Doc) expand(obj *hujson.Object, i int) {
	v := &obj.Members[i].Value
	lit, ok := v.Value.(hujson.Literal)
	if !ok || len(d.held) == 0 {
		return
	}
	raw, ok := d.held[string(lit)]
	if !ok {
		return
	}
	x, err := hujson.Parse(append([]byte(nil), raw...))
	if err != nil {
		panic(fmt.Sprintf("config: a held member parses no more: %v", err)) // json.Valid took it
	}
	v.Value = x.Value
	delete(d.held, string(lit))
}

// expandAll parses every held member into the tree.
func (d *Doc) expandAll() {
	obj := d.root.Value.(*hujson.Object)
	for i := range obj.Members {
		d.expand(obj, i)
	}
}

// unhold puts the held bytes back in place of their placeholders in b.
func (d *Doc) unhold(b []byte) []byte {
	if len(d.held) == 0 {
		return b
	}
	size := len(b)
	for _, raw := range d.held {
		size += len(raw)
	}
	out := make([]byte, 0, size)
	for {
		i := bytes.Index(b, []byte(heldMark))
		if i < 0 {
			return append(out, b...)
		}
		j := i + len(heldMark) + bytes.IndexByte(b[i+len(heldMark):], '"') + 1
		out = append(append(out, b[:i]...), d.held[string(b[i:j])]...)
		b = b[j:]
	}
}

// topMembers returns the spans of the values of the top-level object's
// members in strict JSON b.
func topMembers(b []byte) (spans [][2]int, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil, true
	}
	for i < len(b) {
		if b[i] != '"' {
			return nil, false
		}
		if i = skipString(b, i); i < 0 {
			return nil, false
		}
		if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
			return nil, false
		}
		start := skipSpace(b, i+1)
		end := skipValue(b, start)
		if end < 0 {
			return nil, false
		}
		spans = append(spans, [2]int{start, end})
		i = skipSpace(b, end)
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case '}':
			return spans, true
		case ',':
			i = skipSpace(b, i+1)
		default:
			return nil, false
		}
	}
	return nil, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index after the string opening at b[i], or -1.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				i--
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
	}
	return len(b)
}
