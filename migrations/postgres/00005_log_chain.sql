-- +goose Up
-- The log's checksum chain, as on SQLite (schema 14 and 15 there): every
-- logged row carries a checksum of what it logged chained to the row
-- before it (a successor's first row to its snapshot), and each session's
-- head (its last seq and checksum; seq 0 and the chain's start from its
-- creation until its first row) is written in the row's transaction. A
-- load checks both, and a session that fails is refused by name. The rows
-- logged before this schema are chained, and their sessions given heads,
-- by migration 6, which is Go (the daemon's own checksum; internal/pgdb,
-- chain.go).
ALTER TABLE tool_calls ADD COLUMN checksum BIGINT;

CREATE TABLE log_heads (
    session_id TEXT   PRIMARY KEY REFERENCES sessions (id),
    seq        BIGINT NOT NULL CHECK (seq >= 0),
    checksum   BIGINT NOT NULL
);

-- +goose Down
DROP TABLE log_heads;
ALTER TABLE tool_calls DROP COLUMN checksum;
