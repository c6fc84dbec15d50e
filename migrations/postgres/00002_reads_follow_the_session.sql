-- +goose Up
-- A read costs what the sessions it asks for cost, not the database: the
-- tasks view of schema 1 unpacked every successor's snapshot (one JSON
-- document each) and sorted the whole log on every read, since a step it
-- used twice could not be filtered by session first. A successor's first
-- tasks are now rows of snapshot_tasks, as on SQLite (the JSON document
-- stays, for the daemon's loads), and the view is written so that a
-- filter on session_id reaches every table through its index.

CREATE TABLE snapshot_tasks (
    session_id  TEXT        NOT NULL REFERENCES sessions (id),
    taskid      INTEGER     NOT NULL CHECK (taskid >= 1),
    status      TEXT        NOT NULL,
    subject     TEXT        NOT NULL,
    description TEXT,
    -- The successor's creation: a carried task's created_at in the view.
    created_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (session_id, taskid)
);

INSERT INTO snapshot_tasks (session_id, taskid, status, subject, description, created_at)
SELECT b.session_id, (t ->> 'taskid')::int, t ->> 'status', coalesce(t ->> 'subject', ''), t ->> 'description', s.created_at
FROM snapshots b JOIN sessions s ON s.id = b.session_id,
     -- An empty store's snapshot holds "tasks": null.
     json_array_elements(CASE json_typeof(b.snapshot::json -> 'tasks') WHEN 'array' THEN b.snapshot::json -> 'tasks' ELSE '[]' END) t;

DROP VIEW open_tasks;
DROP VIEW tasks;

-- Each session's tasks, exact at every moment: the latest change of each
-- task in the log, over the tasks a successor started with. The log's
-- part groups by (session_id, taskid), so a filter on session_id is
-- applied before the grouping, through tool_calls_task; each column is
-- then one lookup by primary key.
CREATE VIEW tasks AS
SELECT x.session_id, x.taskid,
       (SELECT f.status FROM tool_calls f WHERE f.session_id = x.session_id AND f.seq = x.last_seq) AS status,
       coalesce((SELECT f.subject FROM tool_calls f WHERE f.session_id = x.session_id AND f.seq = x.subject_seq), b.subject) AS subject,
       coalesce((SELECT f.description FROM tool_calls f WHERE f.session_id = x.session_id AND f.seq = x.description_seq), b.description) AS description,
       coalesce(b.created_at, (SELECT f.created_at FROM tool_calls f WHERE f.session_id = x.session_id AND f.seq = x.first_seq)) AS created_at,
       (SELECT f.created_at FROM tool_calls f WHERE f.session_id = x.session_id AND f.seq = x.last_seq) AS updated_at
FROM (
    SELECT c.session_id, c.taskid, max(c.seq) AS last_seq, min(c.seq) AS first_seq,
           max(CASE WHEN c.subject IS NOT NULL THEN c.seq END) AS subject_seq,
           max(CASE WHEN c.description IS NOT NULL THEN c.seq END) AS description_seq
    FROM tool_calls c
    WHERE c.taskid IS NOT NULL AND NOT c.is_error
    GROUP BY c.session_id, c.taskid
) x
LEFT JOIN snapshot_tasks b ON b.session_id = x.session_id AND b.taskid = x.taskid
UNION ALL
SELECT b.session_id, b.taskid, b.status, b.subject, b.description, b.created_at, b.created_at
FROM snapshot_tasks b
WHERE NOT EXISTS (SELECT 1 FROM tool_calls c WHERE c.session_id = b.session_id AND c.taskid = b.taskid AND NOT c.is_error);

CREATE VIEW open_tasks AS
SELECT t.session_id, s.title AS session_title, t.taskid, t.status, t.subject, t.description, t.updated_at
FROM tasks t JOIN sessions s ON s.id = t.session_id
WHERE t.status IN ('pending', 'inprogress') AND s.status = 'active';

-- +goose Down
DROP VIEW open_tasks;
DROP VIEW tasks;
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
CREATE VIEW open_tasks AS
SELECT t.session_id, s.title AS session_title, t.taskid, t.status, t.subject, t.description, t.updated_at
FROM tasks t JOIN sessions s ON s.id = t.session_id
WHERE t.status IN ('pending', 'inprogress') AND s.status = 'active';
DROP TABLE snapshot_tasks;
