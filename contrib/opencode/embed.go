// Package opencode holds the OpenCode plugin (tasksessiond.ts), built into
// tasksessiond for "tasksessiond setup opencode" to install.
package opencode

import (
	"crypto/sha256"
	_ "embed" // the plugin's source
	"encoding/hex"
	"slices"
)

// Plugin is tasksessiond.ts.
//
//go:embed tasksessiond.ts
var Plugin []byte

// released are the SHA-256 sums of every version of tasksessiond.ts,
// newest first: a file a setup wrote (Released). A change to the plugin
// adds its sum here (TestReleasedHoldsThePlugin).
var released = []string{
	"79b26073ef3c3580ec9f46d210490d8c646bf597b3b7a4aef90a664decf5dc2c",
	"ed2a2f1ea4c480c41bd59114edce5f75ea06e57443c293222fe0b85004f0e077",
	"027b275fe6de668a6b128e50cff484cd5f8740a9c0bb92e627402a3e8248373d",
	"52563687b3de300edf82a84f64d4e2b4684a7c5d039d164626c906d75ff6810d",
	"7baa715369098c823fa8c98ca6319b2fb15b4bf7144f5a64d4ee4193a196ea1b",
	"228a289759a233ce3c7880fe89a25c4d698743660313b6b425d992c0ebe945fd",
	"c7185501db45a52289f1de9bd1568fa74fd93675a1bdb8e1d4f8eef8d9cafefc",
	"da03405d936242d40bc9ba97536987332f7d7b1b5067a2d7bbec75f54e84905b",
}

// Released reports whether b is a version of the plugin as a setup wrote
// it, not a copy someone edited.
func Released(b []byte) bool {
	sum := sha256.Sum256(b)
	return slices.Contains(released, hex.EncodeToString(sum[:]))
}
