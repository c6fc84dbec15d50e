-- +goose Up
-- Exactly-once by callId is kept by the daemon, in memory, from a map
-- rebuilt when a session is loaded; a lock file makes one daemon the only
-- writer of a database. The index cost a page per call.
DROP INDEX tool_calls_call_id;

-- +goose Down
CREATE UNIQUE INDEX tool_calls_call_id ON tool_calls (session_id, call_id) WHERE call_id IS NOT NULL;
