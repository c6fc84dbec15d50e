-- +goose Up
-- The log keeps one index, its key. tool_calls_task put every write into
-- a page of its session's range of a second index, at its task: with many
-- sessions writing at once, each commit wrote a page of it per call beside
-- the key's (3.9 WAL pages a call against 2.0 without it, for 64 sessions
-- of a thousand tasks, on SQLite alone). The tasks view now reads a
-- session's changes through the key.
DROP VIEW session_overview;
DROP VIEW open_tasks;
DROP VIEW tasks;
DROP INDEX tool_calls_task;

-- Each session's tasks, computed from the log whenever it is read, in one
-- pass over the session's changes (through the key): a task the log
-- changed takes its status from its last change and its subject and
-- description from the last change that set them (or its snapshot); a
-- snapshot's task the log never changed is as the snapshot has it, found
-- by counting its rows and a successor's changes by task in one sorted
-- pass (a window, through which SQLite pushes a session_id = ? filter into
-- both arms; a lookup per snapshot task would read the successor's whole
-- log for each).
CREATE VIEW tasks AS
SELECT x.session_id, x.taskid, substr(x.status, 17) AS status,
       coalesce(substr(x.subject, 17), b.subject) AS subject,
       coalesce(substr(x.description, 17), b.description) AS description,
       coalesce(b.created_at, substr(x.first_at, 17)) AS created_at,
       substr(x.last_at, 17) AS updated_at
FROM (
    -- Each value prefixed with its row's seq, 16 digits, so that max()
    -- picks the value of the last row that set it (and min() the first).
    SELECT session_id, taskid,
           max(printf('%016d', seq) || status) AS status,
           max(CASE WHEN subject IS NOT NULL THEN printf('%016d', seq) || subject END) AS subject,
           max(CASE WHEN description IS NOT NULL THEN printf('%016d', seq) || description END) AS description,
           min(printf('%016d', seq) || created_at) AS first_at,
           max(printf('%016d', seq) || created_at) AS last_at
    FROM tool_calls WHERE taskid IS NOT NULL
    GROUP BY session_id, taskid
) x
LEFT JOIN snapshot_tasks b ON b.session_id = x.session_id AND b.taskid = x.taskid
UNION ALL
SELECT session_id, taskid, status, subject, description, created_at, updated_at FROM (
    SELECT *, sum(logged) OVER (PARTITION BY session_id, taskid) AS changes FROM (
        SELECT session_id, taskid, status, subject, description, created_at, updated_at, 0 AS logged FROM snapshot_tasks
        UNION ALL
        SELECT n.session_id, c.taskid, NULL, NULL, NULL, NULL, NULL, 1
        FROM snapshots n JOIN tool_calls c ON c.session_id = n.session_id WHERE c.taskid IS NOT NULL
    )
) WHERE changes = 0;

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

-- +goose Down
DROP VIEW session_overview;
DROP VIEW open_tasks;
DROP VIEW tasks;
CREATE INDEX tool_calls_task ON tool_calls (session_id, taskid, seq, status, created_at, subject, description) WHERE taskid IS NOT NULL;
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
