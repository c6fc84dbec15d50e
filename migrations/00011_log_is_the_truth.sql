-- +goose Up
-- The log is the one truth, and nothing beside it is trusted. A session's
-- tasks are its snapshot (a successor's first tasks, written at its
-- compaction) with its logged changes laid over them; the daemon loads a
-- session by replaying them, and the tasks view computes them from the
-- log when it is read. The projection, the log's index and their marks
-- are gone: the log is keyed by (session_id, seq) again, and a second
-- index finds each task's changes.

DROP VIEW session_overview;
DROP VIEW open_tasks;
DROP VIEW tasks;
DROP VIEW call_log;
DROP VIEW session_log;

CREATE TABLE tool_calls_new (
    session_id  TEXT    NOT NULL REFERENCES sessions (id),
    seq         INTEGER NOT NULL CHECK (seq >= 1),
    call_id     TEXT,
    name        TEXT    NOT NULL,
    arguments   TEXT    NOT NULL CHECK (json_valid(arguments)),
    is_error    INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
    result      TEXT    NOT NULL,
    forced      INTEGER NOT NULL DEFAULT 0 CHECK (forced IN (0, 1)),
    created_at  TEXT    NOT NULL,
    -- A successful write's change (NULL for reads and errors): the task,
    -- its status after the call, and the subject and description the call
    -- set (NULL for those it left).
    taskid      INTEGER,
    status      TEXT,
    subject     TEXT,
    description TEXT,
    PRIMARY KEY (session_id, seq)
) STRICT;
-- Every row is kept, in the order it was logged; a (session, seq) logged
-- twice (only a hand edit makes one) fails the upgrade rather than lose one.
INSERT INTO tool_calls_new (session_id, seq, call_id, name, arguments, is_error, result, forced, created_at, taskid, status, subject, description)
SELECT session_id, seq, call_id, name, arguments, is_error, result, forced, created_at, taskid, status, subject, description
FROM tool_calls ORDER BY id;
-- Writes logged before schema 5 have no change columns (the projection
-- held their effect): they take the task their result echoed, as schema 8
-- gave the rows of schemas 5 to 7.
UPDATE tool_calls_new SET
    taskid = json_extract(result, '$.structuredContent.task.taskid'),
    status = json_extract(result, '$.structuredContent.task.status'),
    subject = json_extract(result, '$.structuredContent.task.subject'),
    description = json_extract(result, '$.structuredContent.task.description')
WHERE taskid IS NULL AND is_error = 0 AND name IN ('TaskCreate', 'TaskUpdate')
  AND json_valid(result) AND json_type(result, '$.structuredContent.task.taskid') = 'integer';

-- A successor's first tasks, as columns: what its parent held when it was
-- sealed, with the taskid the next TaskCreate gets.
CREATE TABLE snapshots_new (
    session_id  TEXT    PRIMARY KEY REFERENCES sessions (id),
    next_taskid INTEGER NOT NULL CHECK (next_taskid >= 1)
) STRICT;
CREATE TABLE snapshot_tasks (
    session_id  TEXT    NOT NULL REFERENCES sessions (id),
    taskid      INTEGER NOT NULL CHECK (taskid >= 1),
    status      TEXT    NOT NULL CHECK (status IN ('pending', 'inprogress', 'completed', 'deleted')),
    subject     TEXT    NOT NULL,
    description TEXT    NOT NULL,
    created_at  TEXT    NOT NULL,
    updated_at  TEXT    NOT NULL,
    PRIMARY KEY (session_id, taskid)
) STRICT, WITHOUT ROWID;

-- Successors made before schema 9 kept their first tasks as JSON.
INSERT INTO snapshots_new (session_id, next_taskid)
SELECT session_id, json_extract(snapshot, '$.nextTaskid') FROM snapshots WHERE snapshot IS NOT NULL;
INSERT INTO snapshot_tasks (session_id, taskid, status, subject, description, created_at, updated_at)
SELECT b.session_id, json_extract(t.value, '$.taskid'), json_extract(t.value, '$.status'),
       coalesce(json_extract(t.value, '$.subject'), ''), coalesce(json_extract(t.value, '$.description'), ''),
       s.created_at, s.created_at
FROM snapshots b JOIN sessions s ON s.id = b.session_id, json_each(b.snapshot, '$.tasks') t
WHERE b.snapshot IS NOT NULL AND json_type(b.snapshot, '$.tasks') = 'array';

-- Later ones started from their parent's tasks as sealed. Those are
-- computed from the log, not read from the projection: the changes of the
-- parent, and of its parent while that one started from its own too, up
-- to a session that started empty or from JSON (whose tasks are above),
-- each field taken from its latest change, older generations first.
INSERT INTO snapshots_new (session_id, next_taskid)
SELECT session_id, 1 FROM snapshots WHERE snapshot IS NULL;
WITH RECURSIVE up(successor, ancestor, depth) AS (
    SELECT b.session_id, s.parent_id, 1
    FROM snapshots b JOIN sessions s ON s.id = b.session_id
    WHERE b.snapshot IS NULL
    UNION ALL
    SELECT up.successor, a.parent_id, up.depth + 1
    FROM up JOIN sessions a ON a.id = up.ancestor JOIN snapshots ab ON ab.session_id = a.id
    WHERE ab.snapshot IS NULL
), changes(successor, taskid, ord, seq, status, subject, description, created_at, updated_at) AS (
    SELECT up.successor, c.taskid, 2 * up.depth, c.seq, c.status, c.subject, c.description, c.created_at, c.created_at
    FROM up JOIN tool_calls_new c ON c.session_id = up.ancestor
    WHERE c.taskid IS NOT NULL AND c.is_error = 0
    UNION ALL
    SELECT up.successor, t.taskid, 2 * up.depth + 1, 0, t.status, t.subject, t.description, t.created_at, t.updated_at
    FROM up JOIN snapshot_tasks t ON t.session_id = up.ancestor
)
INSERT INTO snapshot_tasks (session_id, taskid, status, subject, description, created_at, updated_at)
SELECT DISTINCT successor, taskid,
       first_value(status) OVER (PARTITION BY successor, taskid ORDER BY ord, seq DESC),
       first_value(subject) OVER (PARTITION BY successor, taskid ORDER BY subject IS NULL, ord, seq DESC),
       first_value(description) OVER (PARTITION BY successor, taskid ORDER BY description IS NULL, ord, seq DESC),
       first_value(created_at) OVER (PARTITION BY successor, taskid ORDER BY ord DESC, seq),
       first_value(updated_at) OVER (PARTITION BY successor, taskid ORDER BY ord, seq DESC)
FROM changes;
UPDATE snapshots_new SET next_taskid = 1 + coalesce((SELECT max(t.taskid) FROM snapshot_tasks t WHERE t.session_id = snapshots_new.session_id), 0)
WHERE session_id IN (SELECT session_id FROM snapshots WHERE snapshot IS NULL);

DROP TABLE task_projection;
DROP TABLE log_index;
DROP TABLE projection_state;
DROP TABLE snapshots;
DROP TABLE tool_calls;
ALTER TABLE tool_calls_new RENAME TO tool_calls;
ALTER TABLE snapshots_new RENAME TO snapshots;
ALTER TABLE sessions DROP COLUMN projected_seq;

-- Each task's changes, in order, with what the tasks view reads of them:
-- the view is answered from this index alone (a log row, its result
-- included, is ten times the size), and finds by it which of a snapshot's
-- tasks the log has changed.
CREATE INDEX tool_calls_task ON tool_calls (session_id, taskid, seq, status, created_at, subject, description) WHERE taskid IS NOT NULL;

-- Each session's tasks, computed from the log whenever it is read: a task
-- the log changed takes its status from its last change and its subject
-- and description from the last change that set them (or its snapshot);
-- a snapshot's task the log never changed is as the snapshot has it.
-- Written without CTEs, so that SQLite pushes a session_id = ? filter into
-- both arms and reads that session's rows only; each change is read from
-- tool_calls_task (named: the planner would take the log's key, and read
-- the whole row).
CREATE VIEW tasks AS
SELECT x.session_id, x.taskid,
       (SELECT f.status FROM tool_calls f INDEXED BY tool_calls_task WHERE f.session_id = x.session_id AND f.taskid = x.taskid AND f.seq = x.last_seq) AS status,
       coalesce((SELECT f.subject FROM tool_calls f INDEXED BY tool_calls_task WHERE f.session_id = x.session_id AND f.taskid = x.taskid AND f.seq = x.subject_seq), b.subject) AS subject,
       coalesce((SELECT f.description FROM tool_calls f INDEXED BY tool_calls_task WHERE f.session_id = x.session_id AND f.taskid = x.taskid AND f.seq = x.description_seq), b.description) AS description,
       coalesce(b.created_at, (SELECT f.created_at FROM tool_calls f INDEXED BY tool_calls_task WHERE f.session_id = x.session_id AND f.taskid = x.taskid AND f.seq = x.first_seq)) AS created_at,
       (SELECT f.created_at FROM tool_calls f INDEXED BY tool_calls_task WHERE f.session_id = x.session_id AND f.taskid = x.taskid AND f.seq = x.last_seq) AS updated_at
FROM (
    SELECT session_id, taskid, max(seq) AS last_seq, min(seq) AS first_seq,
           max(CASE WHEN subject IS NOT NULL THEN seq END) AS subject_seq,
           max(CASE WHEN description IS NOT NULL THEN seq END) AS description_seq
    FROM tool_calls WHERE taskid IS NOT NULL
    GROUP BY session_id, taskid
) x
LEFT JOIN snapshot_tasks b ON b.session_id = x.session_id AND b.taskid = x.taskid
UNION ALL
SELECT b.session_id, b.taskid, b.status, b.subject, b.description, b.created_at, b.updated_at
FROM snapshot_tasks b
WHERE NOT EXISTS (SELECT 1 FROM tool_calls c WHERE c.session_id = b.session_id AND c.taskid = b.taskid);

CREATE VIEW open_tasks AS
SELECT t.session_id, s.title AS session_title, t.taskid, t.status, t.subject, t.description, t.updated_at
FROM tasks t JOIN sessions s ON s.id = t.session_id
WHERE t.status IN ('pending', 'inprogress') AND s.status = 'active';

-- One pass over the tasks serves every session's counts (a query of one
-- session reads them all: filter the tasks view for one).
CREATE VIEW session_overview AS
SELECT s.id, s.title, s.status, s.parent_id, s.successor_id, s.created_at,
       max(s.updated_at, coalesce((SELECT c.created_at FROM tool_calls c WHERE c.session_id = s.id ORDER BY c.seq DESC LIMIT 1), '')) AS updated_at,
       coalesce(t.tasks, 0) AS tasks, coalesce(t.pending, 0) AS pending, coalesce(t.inprogress, 0) AS inprogress,
       coalesce(t.completed, 0) AS completed, coalesce(t.deleted, 0) AS deleted,
       (SELECT count(*) FROM tool_calls c WHERE c.session_id = s.id) AS calls
FROM sessions s
LEFT JOIN (
    SELECT session_id, count(*) AS tasks, sum(status = 'pending') AS pending, sum(status = 'inprogress') AS inprogress,
           sum(status = 'completed') AS completed, sum(status = 'deleted') AS deleted
    FROM tasks GROUP BY session_id
) t ON t.session_id = s.id;

-- The log, readable: what each call asked for and whether it failed.
CREATE VIEW call_log AS
SELECT session_id, seq, call_id, name,
       json_extract(arguments, '$.taskid') AS taskid,
       json_extract(arguments, '$.status') AS status,
       json_extract(arguments, '$.subject') AS subject,
       is_error, forced, created_at
FROM tool_calls;

-- +goose Down
-- Back to schema 10's projection is not offered: restore the copy of the
-- database taken before the upgrade.
CREATE TEMP TABLE downgrade (refused INTEGER
    CONSTRAINT "downgrading from schema 11 is not supported: restore the copy of the database taken before the upgrade" CHECK (refused = 0));
INSERT INTO downgrade VALUES (1);
