package config

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tailscale/hujson"
)

// A strict JSON file may be tens of megabytes (Claude Code's state file
// keeps every project's prompt history) of which setup reads and edits a
// few small members. Parsing it whole costs seconds and a gigabyte of
// tree, so a large top-level member is held as its bytes, checked by
// jsontext's decoder, stood in the tree by a placeholder string, and parsed
// only when an edit looks into it; Bytes puts the held bytes back.

// heldFrom is the size from which a top-level member's value is held.
const heldFrom = 64 << 10

// heldMark starts every placeholder; a file holding it is parsed whole.
const heldMark = `"\u0000tasksessiond-held-`

// hold returns b with each large top-level member's value replaced by a
// placeholder, and the values by placeholder; ok false when b is not an
// object jsontext reads (the full parse then says why) or holds nothing
// large.
func hold(b []byte) (skeleton []byte, held map[string][]byte, ok bool) {
	if len(b) < heldFrom || bytes.Contains(b, []byte(heldMark)) {
		return nil, nil, false
	}
	// a bytes.Buffer is read in place, not copied
	dec := jsontext.NewDecoder(bytes.NewBuffer(b), jsontext.AllowDuplicateNames(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, nil, false
	}
	held = map[string][]byte{}
	var out []byte
	last := 0
	for dec.PeekKind() == '"' {
		if _, err := dec.ReadToken(); err != nil {
			return nil, nil, false
		}
		v, err := dec.ReadValue() // checked as strict JSON
		if err != nil {
			return nil, nil, false
		}
		if len(v) < heldFrom {
			continue
		}
		end := int(dec.InputOffset())
		mark := fmt.Sprintf(`%s%d"`, heldMark, len(held))
		held[mark] = b[end-len(v) : end]
		out = append(append(out, b[last:end-len(v)]...), mark...)
		last = end
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' || len(held) == 0 {
		return nil, nil, false
	}
	return append(out, b[last:]...), held, true
}

// expand parses the held member at obj.Members[i] into the tree.
func (d *Doc) expand(obj *hujson.Object, i int) {
	v := &obj.Members[i].Value
	lit, _ := v.Value.(hujson.Literal)
	raw, ok := d.held[string(lit)]
	if !ok {
		return
	}
	x, err := hujson.Parse(bytes.Clone(raw))
	if err != nil {
		panic(fmt.Sprintf("config: a held member parses no more: %v", err)) // jsontext read it
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
