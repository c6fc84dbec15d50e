-- +goose Up
-- The log is written in the order of the calls, and indexed per session
-- by the projector, in batches. Its primary key (session_id, seq) put
-- every call of every session into that session's own index page: with
-- many sessions writing at once, each commit wrote a page per call besides
-- the rows. Now a commit appends the rows only; the projector, which runs
-- when the writes pause (at least once a second), files the rows past its
-- mark into log_index, sorted, so a session's page is written once per
-- run. A session's log is its indexed rows and the rows past the mark
-- (the tail: at most a second of calls), read together through the view
-- session_log. The daemon keeps seq unique per session (one writer per
-- database, which checks each call follows its session's last).
-- The table is rebuilt without the key; rowids are kept, as its id (the
-- projection's mark and the index count them: an INTEGER PRIMARY KEY,
-- which VACUUM keeps, where it may renumber plain rowids). The views
-- naming the log are left to be replaced below (legacy_alter_table: the
-- rename does not re-check them).
PRAGMA legacy_alter_table = ON;
CREATE TABLE tool_calls_new (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT    NOT NULL REFERENCES sessions (id),
    seq         INTEGER NOT NULL CHECK (seq >= 1),
    call_id     TEXT,
    name        TEXT    NOT NULL,
    arguments   TEXT    NOT NULL CHECK (json_valid(arguments)),
    is_error    INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
    result      TEXT    NOT NULL,
    forced      INTEGER NOT NULL DEFAULT 0 CHECK (forced IN (0, 1)),
    created_at  TEXT    NOT NULL,
    taskid      INTEGER,
    status      TEXT,
    subject     TEXT,
    description TEXT
) STRICT;
INSERT INTO tool_calls_new (id, session_id, seq, call_id, name, arguments, is_error, result, forced, created_at, taskid, status, subject, description)
SELECT rowid, session_id, seq, call_id, name, arguments, is_error, result, forced, created_at, taskid, status, subject, description
FROM tool_calls ORDER BY rowid;
DROP TABLE tool_calls;
ALTER TABLE tool_calls_new RENAME TO tool_calls;
PRAGMA legacy_alter_table = OFF;

-- Each log row the projection has seen (id up to projection_state's
-- through_rowid), by session and seq; call is the row's id.
CREATE TABLE log_index (
    session_id TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    call       INTEGER NOT NULL,
    PRIMARY KEY (session_id, seq)
) STRICT, WITHOUT ROWID;
INSERT INTO log_index (session_id, seq, call)
SELECT session_id, seq, rowid FROM tool_calls WHERE rowid <= (SELECT through_rowid FROM projection_state)
ORDER BY session_id, seq;

-- A session's log: filter it by session_id (the indexed rows and the tail
-- are read apart, each by its own path).
CREATE VIEW session_log AS
SELECT i.session_id, i.seq, c.call_id, c.name, c.arguments, c.is_error, c.result, c.forced, c.created_at,
       c.taskid, c.status, c.subject, c.description
FROM log_index i JOIN tool_calls c ON c.rowid = i.call
UNION ALL
SELECT c.session_id, c.seq, c.call_id, c.name, c.arguments, c.is_error, c.result, c.forced, c.created_at,
       c.taskid, c.status, c.subject, c.description
FROM tool_calls c WHERE c.rowid > (SELECT through_rowid FROM projection_state);

DROP VIEW session_overview;
DROP VIEW open_tasks;
DROP VIEW tasks;
DROP VIEW call_log;

-- Three layers, each hiding the ones before it: a successor's first tasks
-- (its parent's projection) until they are projected, the projection, and
-- the changes in the tail past each session's projected_seq, where a
-- task's status is its latest row's and its subject and description the
-- latest a row set. The tail has no index: its changes are gathered once
-- per query (one scan of at most a second of calls), and its rows found
-- again by rowid, which follows seq within a session.
CREATE VIEW tasks AS
WITH tail AS MATERIALIZED (
    SELECT c.session_id, c.taskid, s.parent_id, max(c.rowid) AS last_row, min(c.rowid) AS first_row,
           max(CASE WHEN c.subject IS NOT NULL THEN c.rowid END) AS subject_row,
           max(CASE WHEN c.description IS NOT NULL THEN c.rowid END) AS description_row
    FROM tool_calls c JOIN sessions s ON s.id = c.session_id
    WHERE c.rowid > (SELECT through_rowid FROM projection_state) AND c.seq > s.projected_seq AND c.taskid IS NOT NULL
    GROUP BY c.session_id, c.taskid
)
SELECT p.session_id, p.taskid, p.status, p.subject, p.description, p.created_at, p.updated_at
FROM task_projection p LEFT JOIN tail x ON x.session_id = p.session_id AND x.taskid = p.taskid
WHERE x.taskid IS NULL
UNION ALL
SELECT b.session_id, pp.taskid, pp.status, pp.subject, pp.description, pp.created_at, s.created_at
FROM snapshots b JOIN sessions s ON s.id = b.session_id JOIN task_projection pp ON pp.session_id = s.parent_id
LEFT JOIN tail x ON x.session_id = b.session_id AND x.taskid = pp.taskid
WHERE b.projected = 0 AND x.taskid IS NULL
UNION ALL
SELECT x.session_id, x.taskid,
       (SELECT f.status FROM tool_calls f WHERE f.rowid = x.last_row),
       coalesce((SELECT f.subject FROM tool_calls f WHERE f.rowid = x.subject_row), p.subject, pp.subject),
       coalesce((SELECT f.description FROM tool_calls f WHERE f.rowid = x.description_row), p.description, pp.description),
       coalesce(p.created_at, pp.created_at, (SELECT f.created_at FROM tool_calls f WHERE f.rowid = x.first_row)),
       (SELECT f.created_at FROM tool_calls f WHERE f.rowid = x.last_row)
FROM tail x
LEFT JOIN task_projection p ON p.session_id = x.session_id AND p.taskid = x.taskid
-- A successor's first task not projected yet: its parent's row.
LEFT JOIN snapshots b ON b.session_id = x.session_id AND b.projected = 0
LEFT JOIN task_projection pp ON b.session_id IS NOT NULL AND pp.session_id = x.parent_id AND pp.taskid = x.taskid;

CREATE VIEW open_tasks AS
SELECT t.session_id, s.title AS session_title, t.taskid, t.status, t.subject, t.description, t.updated_at
FROM tasks t JOIN sessions s ON s.id = t.session_id
WHERE t.status IN ('pending', 'inprogress') AND s.status = 'active';

-- One pass over the tasks and one over the log's tail serve every
-- session's counts (a query of one session reads them all: filter the
-- tasks view for one). A session's last call is in the tail, or else the
-- last it indexed.
CREATE VIEW session_overview AS
SELECT s.id, s.title, s.status, s.parent_id, s.successor_id, s.created_at,
       max(s.updated_at, coalesce(l.last_at,
           (SELECT c.created_at FROM log_index i JOIN tool_calls c ON c.rowid = i.call WHERE i.session_id = s.id ORDER BY i.seq DESC LIMIT 1),
           '')) AS updated_at,
       coalesce(t.tasks, 0) AS tasks, coalesce(t.pending, 0) AS pending, coalesce(t.inprogress, 0) AS inprogress,
       coalesce(t.completed, 0) AS completed, coalesce(t.deleted, 0) AS deleted,
       (SELECT count(*) FROM log_index i WHERE i.session_id = s.id) + coalesce(l.calls, 0) AS calls
FROM sessions s
LEFT JOIN (
    SELECT session_id, count(*) AS tasks, sum(status = 'pending') AS pending, sum(status = 'inprogress') AS inprogress,
           sum(status = 'completed') AS completed, sum(status = 'deleted') AS deleted
    FROM tasks GROUP BY session_id
) t ON t.session_id = s.id
LEFT JOIN (
    SELECT session_id, count(*) AS calls, max(created_at) AS last_at
    FROM tool_calls WHERE rowid > (SELECT through_rowid FROM projection_state)
    GROUP BY session_id
) l ON l.session_id = s.id;

-- The log, readable: what each call asked for and whether it failed.
CREATE VIEW call_log AS
SELECT session_id, seq, call_id, name,
       json_extract(arguments, '$.taskid') AS taskid,
       json_extract(arguments, '$.status') AS status,
       json_extract(arguments, '$.subject') AS subject,
       is_error, forced, created_at
FROM session_log;

-- +goose Down
-- The log gets its key back (a duplicate would fail here, as it would have
-- before) and the views read it by that key.
DROP VIEW session_overview;
DROP VIEW open_tasks;
DROP VIEW tasks;
DROP VIEW call_log;
DROP VIEW session_log;
DROP TABLE log_index;
PRAGMA legacy_alter_table = ON;
CREATE TABLE tool_calls_old (
    session_id  TEXT    NOT NULL REFERENCES sessions (id),
    seq         INTEGER NOT NULL CHECK (seq >= 1),
    call_id     TEXT,
    name        TEXT    NOT NULL,
    arguments   TEXT    NOT NULL CHECK (json_valid(arguments)),
    is_error    INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
    result      TEXT    NOT NULL,
    forced      INTEGER NOT NULL DEFAULT 0 CHECK (forced IN (0, 1)),
    created_at  TEXT    NOT NULL,
    taskid      INTEGER,
    status      TEXT,
    subject     TEXT,
    description TEXT,
    PRIMARY KEY (session_id, seq)
) STRICT;
INSERT INTO tool_calls_old (rowid, session_id, seq, call_id, name, arguments, is_error, result, forced, created_at, taskid, status, subject, description)
SELECT id, session_id, seq, call_id, name, arguments, is_error, result, forced, created_at, taskid, status, subject, description
FROM tool_calls ORDER BY rowid;
DROP TABLE tool_calls;
ALTER TABLE tool_calls_old RENAME TO tool_calls;
PRAGMA legacy_alter_table = OFF;
CREATE VIEW tasks AS
SELECT p.session_id, p.taskid, p.status, p.subject, p.description, p.created_at, p.updated_at
FROM task_projection p
WHERE NOT EXISTS (
    SELECT 1 FROM sessions s JOIN tool_calls c ON c.session_id = s.id AND c.seq > s.projected_seq
    WHERE s.id = p.session_id AND c.taskid = p.taskid)
UNION ALL
SELECT b.session_id, pp.taskid, pp.status, pp.subject, pp.description, pp.created_at, s.created_at
FROM snapshots b JOIN sessions s ON s.id = b.session_id JOIN task_projection pp ON pp.session_id = s.parent_id
WHERE b.projected = 0 AND NOT EXISTS (
    SELECT 1 FROM tool_calls c WHERE c.session_id = b.session_id AND c.seq > s.projected_seq AND c.taskid = pp.taskid)
UNION ALL
-- Each task changed past the projection: its status and time from its
-- last row, its subject and description from the last row that set them,
-- each read by its key (session, seq), so a long tail costs n log n.
-- (Lookups, not joins: without statistics the planner may otherwise pair
-- every row of the tail with every other.)
SELECT x.session_id, x.taskid,
       (SELECT f.status FROM tool_calls f WHERE f.session_id = x.session_id AND f.seq = x.last_seq),
       coalesce((SELECT f.subject FROM tool_calls f WHERE f.session_id = x.session_id AND f.seq = x.subject_seq),
                p.subject, pp.subject),
       coalesce((SELECT f.description FROM tool_calls f WHERE f.session_id = x.session_id AND f.seq = x.description_seq),
                p.description, pp.description),
       coalesce(p.created_at, pp.created_at,
                (SELECT f.created_at FROM tool_calls f WHERE f.session_id = x.session_id AND f.seq = x.first_seq)),
       (SELECT f.created_at FROM tool_calls f WHERE f.session_id = x.session_id AND f.seq = x.last_seq)
FROM (
    SELECT c.session_id, c.taskid, s.parent_id, max(c.seq) AS last_seq, min(c.seq) AS first_seq,
           max(CASE WHEN c.subject IS NOT NULL THEN c.seq END) AS subject_seq,
           max(CASE WHEN c.description IS NOT NULL THEN c.seq END) AS description_seq
    FROM sessions s JOIN tool_calls c ON c.session_id = s.id AND c.seq > s.projected_seq
    WHERE c.taskid IS NOT NULL
    GROUP BY c.session_id, c.taskid
) x
LEFT JOIN task_projection p ON p.session_id = x.session_id AND p.taskid = x.taskid
-- A successor's first task not projected yet: its parent's row.
LEFT JOIN snapshots b ON b.session_id = x.session_id AND b.projected = 0
LEFT JOIN task_projection pp ON b.session_id IS NOT NULL AND pp.session_id = x.parent_id AND pp.taskid = x.taskid;

CREATE VIEW open_tasks AS
SELECT t.session_id, s.title AS session_title, t.taskid, t.status, t.subject, t.description, t.updated_at
FROM tasks t JOIN sessions s ON s.id = t.session_id
WHERE t.status IN ('pending', 'inprogress') AND s.status = 'active';

CREATE VIEW session_overview AS
SELECT s.id, s.title, s.status, s.parent_id, s.successor_id, s.created_at,
       max(s.updated_at, coalesce((SELECT c.created_at FROM tool_calls c WHERE c.session_id = s.id ORDER BY c.seq DESC LIMIT 1), '')) AS updated_at,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id) AS tasks,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id AND t.status = 'pending') AS pending,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id AND t.status = 'inprogress') AS inprogress,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id AND t.status = 'completed') AS completed,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id AND t.status = 'deleted') AS deleted,
       (SELECT count(*) FROM tool_calls c WHERE c.session_id = s.id) AS calls
FROM sessions s;

CREATE VIEW call_log AS
SELECT session_id, seq, call_id, name,
       json_extract(arguments, '$.taskid') AS taskid,
       json_extract(arguments, '$.status') AS status,
       json_extract(arguments, '$.subject') AS subject,
       is_error, forced, created_at
FROM tool_calls;
