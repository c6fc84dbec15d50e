-- +goose Up
-- The PostgreSQL schema of fleet mode: the same tables as SQLite's, less the
-- projection (the tasks view reads the log), plus the leases by which one
-- daemon of a fleet serves each session. JSON is kept as text, byte for
-- byte as the daemon encoded it (a retried call returns its recorded
-- result exactly); the views cast it to json.

CREATE TABLE sessions (
    id           TEXT PRIMARY KEY,
    -- The order sessions were created in, for sessions/list's cursor.
    n            BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    title        TEXT NOT NULL DEFAULT '',
    metadata     TEXT NOT NULL DEFAULT '{}',
    status       TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'compacted')),
    parent_id    TEXT REFERENCES sessions (id),
    successor_id TEXT REFERENCES sessions (id),
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);

-- The store a successor started from: {"tasks": [...], "nextTaskid": n}.
CREATE TABLE snapshots (
    session_id TEXT PRIMARY KEY REFERENCES sessions (id),
    snapshot   TEXT NOT NULL
);

-- The session log: every logged tool call, in apply order (seq from 1 per session).
CREATE TABLE tool_calls (
    session_id TEXT    NOT NULL REFERENCES sessions (id),
    seq        BIGINT  NOT NULL CHECK (seq >= 1),
    call_id    TEXT,
    name       TEXT    NOT NULL,
    arguments  TEXT    NOT NULL,
    is_error   BOOLEAN NOT NULL DEFAULT false,
    result     TEXT    NOT NULL,
    forced     BOOLEAN NOT NULL DEFAULT false,
    created_at TIMESTAMPTZ NOT NULL,
    -- A successful write's change (NULL for reads and errors): the task,
    -- its status after the call, and the subject and description the call
    -- set (NULL for those it left). The tasks view reads these, not the
    -- result, whose echo of the task shortens a long description.
    taskid      INTEGER,
    status      TEXT,
    subject     TEXT,
    description TEXT,
    PRIMARY KEY (session_id, seq)
);

-- Several daemons write one database: exactly-once by callId is the
-- database's to guarantee, not one process's memory.
CREATE UNIQUE INDEX tool_calls_call_id ON tool_calls (session_id, call_id) WHERE call_id IS NOT NULL;
-- A lineage's callIds are looked up by callId across its sessions.
CREATE INDEX tool_calls_by_call_id ON tool_calls (call_id) WHERE call_id IS NOT NULL;
-- The tasks view finds each task's latest change.
CREATE INDEX tool_calls_task ON tool_calls (session_id, taskid, seq) WHERE taskid IS NOT NULL;

CREATE TABLE messages (
    session_id TEXT    NOT NULL REFERENCES sessions (id),
    seq        INTEGER NOT NULL,
    role       TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    content    TEXT    NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (session_id, seq)
);

-- Which daemon serves a session: the owner until expires_at (the
-- database's clock), renewed by it while it holds the session in memory.
-- Every append checks, in its own transaction, that its daemon still
-- holds the lease.
CREATE TABLE leases (
    session_id TEXT PRIMARY KEY REFERENCES sessions (id),
    owner      TEXT NOT NULL,  -- a random id per daemon process
    owner_info TEXT NOT NULL,  -- host and pid, for the error a client gets
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX leases_owner ON leases (owner);

-- Each session's tasks, exact at every moment: the latest change of each
-- task in the log, over the tasks a successor started with (its snapshot).
CREATE VIEW tasks AS
WITH changes AS (
    SELECT DISTINCT ON (c.session_id, c.taskid)
           c.session_id, c.taskid, c.status, c.created_at AS updated_at
    FROM tool_calls c
    WHERE c.taskid IS NOT NULL AND NOT c.is_error
    ORDER BY c.session_id, c.taskid, c.seq DESC
), subjects AS (
    SELECT DISTINCT ON (c.session_id, c.taskid) c.session_id, c.taskid, c.subject
    FROM tool_calls c
    WHERE c.taskid IS NOT NULL AND c.subject IS NOT NULL
    ORDER BY c.session_id, c.taskid, c.seq DESC
), descriptions AS (
    SELECT DISTINCT ON (c.session_id, c.taskid) c.session_id, c.taskid, c.description
    FROM tool_calls c
    WHERE c.taskid IS NOT NULL AND c.description IS NOT NULL
    ORDER BY c.session_id, c.taskid, c.seq DESC
), firsts AS (
    SELECT c.session_id, c.taskid, min(c.created_at) AS created_at
    FROM tool_calls c
    WHERE c.taskid IS NOT NULL AND NOT c.is_error
    GROUP BY c.session_id, c.taskid
), carried AS (
    SELECT b.session_id, (t ->> 'taskid')::int AS taskid, t AS task, s.created_at
    -- An empty store's snapshot holds "tasks": null.
    FROM snapshots b JOIN sessions s ON s.id = b.session_id,
         json_array_elements(CASE json_typeof(b.snapshot::json -> 'tasks') WHEN 'array' THEN b.snapshot::json -> 'tasks' ELSE '[]' END) t
)
SELECT ch.session_id, ch.taskid, ch.status,
       coalesce(sj.subject, ca.task ->> 'subject') AS subject,
       coalesce(dj.description, ca.task ->> 'description') AS description,
       coalesce(ca.created_at, f.created_at) AS created_at, ch.updated_at
FROM changes ch
JOIN firsts f ON f.session_id = ch.session_id AND f.taskid = ch.taskid
LEFT JOIN subjects sj ON sj.session_id = ch.session_id AND sj.taskid = ch.taskid
LEFT JOIN descriptions dj ON dj.session_id = ch.session_id AND dj.taskid = ch.taskid
LEFT JOIN carried ca ON ca.session_id = ch.session_id AND ca.taskid = ch.taskid
UNION ALL
SELECT ca.session_id, ca.taskid, ca.task ->> 'status', ca.task ->> 'subject', ca.task ->> 'description', ca.created_at, ca.created_at
FROM carried ca
WHERE NOT EXISTS (SELECT 1 FROM tool_calls c WHERE c.session_id = ca.session_id AND c.taskid = ca.taskid AND NOT c.is_error);

-- The tasks still to do in sessions still in use.
CREATE VIEW open_tasks AS
SELECT t.session_id, s.title AS session_title, t.taskid, t.status, t.subject, t.description, t.updated_at
FROM tasks t JOIN sessions s ON s.id = t.session_id
WHERE t.status IN ('pending', 'inprogress') AND s.status = 'active';

-- The log, readable.
CREATE VIEW call_log AS
SELECT session_id, seq, call_id, name,
       arguments::json ->> 'taskid' AS taskid,
       arguments::json ->> 'status' AS status,
       arguments::json ->> 'subject' AS subject,
       is_error, forced, created_at
FROM tool_calls;

-- +goose Down
DROP VIEW call_log;
DROP VIEW open_tasks;
DROP VIEW tasks;
DROP TABLE leases;
DROP TABLE messages;
DROP TABLE tool_calls;
DROP TABLE snapshots;
DROP TABLE sessions;
