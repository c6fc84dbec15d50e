package codex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// HookTrustHash is the hash Codex records as a hook's trusted_hash in
// config.toml ([hooks.state."<hooks.json path>:<event>:<group>:<handler>"]):
// "sha256:" and the hex SHA-256 of the hook's normalized identity as JSON
// with sorted keys (codex-rs/hooks/src/engine/discovery.rs,
// command_hook_hash; codex-rs/config/src/fingerprint.rs, version_for_toml):
// the event's label, the matcher (left out when there is none), and the one
// handler with its timeout made explicit (600 s by default) and async
// false. A hook whose hash does not match is skipped silently by "codex
// exec" (untrusted): setup, which the user runs to install the hook,
// records its trust.
func HookTrustHash(event, matcher, command string, timeoutSec int) string {
	identity := map[string]any{
		"event_name": event,
		"hooks":      []any{map[string]any{"type": "command", "command": command, "timeout": timeoutSec, "async": false}},
	}
	if matcher != "" {
		identity["matcher"] = matcher
	}
	// Go sorts map keys, as Codex's canonical JSON does; it escapes <, >
	// and & unless told not to, which Codex does not (a command "a > b").
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(identity)
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}
