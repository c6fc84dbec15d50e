-- +goose Up
-- The tasks projection is written off the hot path: the daemon's writer
-- brings task_projection up to date every so often, and records in each
-- session how far (projected_seq). The tasks view is the projection with
-- the log rows past that point laid over it, so it shows every
-- acknowledged call exactly, whenever it is read.
ALTER TABLE tasks RENAME TO task_projection;
ALTER TABLE sessions ADD COLUMN projected_seq INTEGER NOT NULL DEFAULT 0;
-- The task a successful write changed (NULL for reads and errors): the
-- view finds a task's changes past the projection without parsing JSON.
ALTER TABLE tool_calls ADD COLUMN taskid INTEGER;
-- What the synchronous projection held was up to date with the whole log.
UPDATE sessions SET projected_seq = coalesce((SELECT max(seq) FROM tool_calls c WHERE c.session_id = sessions.id), 0);
-- The log rows (by rowid, which only grows) the projection has seen: at
-- start-up, a daemon catches up from there on what its predecessor left.
CREATE TABLE projection_state (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    through_rowid INTEGER NOT NULL
) STRICT;
INSERT INTO projection_state (id, through_rowid) VALUES (1, coalesce((SELECT max(rowid) FROM tool_calls), 0));

-- Written without CTEs, so that SQLite pushes a session_id = ? filter down
-- into both arms and reads one session's rows only.
CREATE VIEW tasks AS
SELECT p.session_id, p.taskid, p.status, p.subject, p.description, p.created_at, p.updated_at
FROM task_projection p
WHERE NOT EXISTS (
    SELECT 1 FROM sessions s JOIN tool_calls c ON c.session_id = s.id AND c.seq > s.projected_seq
    WHERE s.id = p.session_id AND c.taskid = p.taskid)
UNION ALL
SELECT l.session_id, l.taskid, json_extract(l.task, '$.status'), json_extract(l.task, '$.subject'),
       json_extract(l.task, '$.description'),
       coalesce((SELECT p.created_at FROM task_projection p WHERE p.session_id = l.session_id AND p.taskid = l.taskid), l.updated_at),
       l.updated_at
FROM (
    -- The latest change of each task past the projection; SQLite takes the
    -- bare columns from the row holding max(seq).
    SELECT c.session_id, c.taskid, json_extract(c.result, '$.structuredContent.task') AS task, max(c.seq) AS seq,
           c.created_at AS updated_at
    FROM sessions s JOIN tool_calls c ON c.session_id = s.id AND c.seq > s.projected_seq
    WHERE c.taskid IS NOT NULL
    GROUP BY c.session_id, c.taskid
) l;

-- The views over tasks read the view, not the renamed table.
DROP VIEW open_tasks;
CREATE VIEW open_tasks AS
SELECT t.session_id, s.title AS session_title, t.taskid, t.status, t.subject, t.description, t.updated_at
FROM tasks t JOIN sessions s ON s.id = t.session_id
WHERE t.status IN ('pending', 'inprogress') AND s.status = 'active';

DROP VIEW session_overview;
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

-- +goose Down
DROP TABLE projection_state;
ALTER TABLE tool_calls DROP COLUMN taskid;
DROP VIEW session_overview;
DROP VIEW open_tasks;
DROP VIEW tasks;
ALTER TABLE task_projection RENAME TO tasks;
ALTER TABLE sessions DROP COLUMN projected_seq;
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
