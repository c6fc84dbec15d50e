-- +goose Up
-- Sessions: one row per session; a compacted session's successor holds the
-- store copied in at compaction (snapshot: {"tasks": [...], "nextTaskid": n}).
CREATE TABLE sessions (
    id           TEXT PRIMARY KEY,
    title        TEXT NOT NULL DEFAULT '',
    metadata     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    status       TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'compacted')),
    parent_id    TEXT REFERENCES sessions (id),
    successor_id TEXT REFERENCES sessions (id),
    snapshot     TEXT, -- JSON; not CHECKed: at 10,000 tasks json_valid costs more than the rest of the insert
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
) STRICT;

-- The session log: every tool call, in apply order (seq from 1 per session).
-- Resume replays it; arguments and result are JSON text for json_extract.
CREATE TABLE tool_calls (
    session_id TEXT    NOT NULL REFERENCES sessions (id),
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    call_id    TEXT,
    name       TEXT    NOT NULL,
    arguments  TEXT    NOT NULL CHECK (json_valid(arguments)),
    is_error   INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
    result     TEXT    NOT NULL, -- JSON, as the daemon encoded it; not CHECKed, for the same reason
    forced     INTEGER NOT NULL DEFAULT 0 CHECK (forced IN (0, 1)),
    created_at TEXT    NOT NULL,
    PRIMARY KEY (session_id, seq)
) STRICT;

-- A host's retry sends the same call_id; the database, not only memory,
-- guarantees it is recorded once per session.
CREATE UNIQUE INDEX tool_calls_call_id ON tool_calls (session_id, call_id) WHERE call_id IS NOT NULL;

-- Messages injected at the start of a session (the task snapshot after compaction).
CREATE TABLE messages (
    session_id TEXT    NOT NULL REFERENCES sessions (id),
    seq        INTEGER NOT NULL,
    role       TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    content    TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    PRIMARY KEY (session_id, seq)
) STRICT;

-- A projection of each session's current tasks, written in the same
-- transaction as the log row, for people with the sqlite3 shell. Resume never reads it.
CREATE TABLE tasks (
    session_id  TEXT    NOT NULL REFERENCES sessions (id),
    taskid      INTEGER NOT NULL,
    status      TEXT    NOT NULL CHECK (status IN ('pending', 'inprogress', 'completed', 'deleted')),
    subject     TEXT    NOT NULL,
    description TEXT    NOT NULL,
    created_at  TEXT    NOT NULL,
    updated_at  TEXT    NOT NULL,
    PRIMARY KEY (session_id, taskid)
) STRICT, WITHOUT ROWID;

-- +goose Down
DROP TABLE tasks;
DROP TABLE messages;
DROP INDEX tool_calls_call_id;
DROP TABLE tool_calls;
DROP TABLE sessions;
