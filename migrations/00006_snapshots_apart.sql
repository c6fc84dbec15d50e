-- +goose Up
-- A successor's snapshot moves to a table of its own (out of the sessions
-- row, it is no longer rewritten when its session is sealed), and
-- compaction no longer copies the tasks into task_projection. It brings
-- the old session's projection up to date instead (the old session is
-- sealed: its projection then holds its final tasks, which are the
-- successor's first), and the daemon's projector copies those rows to the
-- successor later, off the compaction's path. Until it has (projected =
-- 0), the tasks view reads the successor's first tasks from its parent's
-- projection.
CREATE TABLE snapshots (
    session_id TEXT    PRIMARY KEY REFERENCES sessions (id),
    -- {"tasks": [...], "nextTaskid": n}, what the successor's store is rebuilt from;
    -- not CHECKed: at 10,000 tasks json_valid costs more than the rest of the insert.
    snapshot   TEXT    NOT NULL,
    projected  INTEGER NOT NULL DEFAULT 0 CHECK (projected IN (0, 1))
) STRICT;
-- The projector finds the snapshots still to copy without a scan.
CREATE INDEX snapshots_unprojected ON snapshots (session_id) WHERE projected = 0;
-- Compaction copied the tasks at once until now: every snapshot is projected.
INSERT INTO snapshots (session_id, snapshot, projected) SELECT id, snapshot, 1 FROM sessions WHERE snapshot IS NOT NULL;

DROP VIEW session_overview;
DROP VIEW open_tasks;
DROP VIEW tasks;
ALTER TABLE sessions DROP COLUMN snapshot;

-- Three layers, each hiding the ones before it: a successor's first tasks
-- (its parent's projection) until they are projected, the projection, and
-- the log rows past each session's projected_seq. Written without CTEs, so
-- that SQLite pushes a session_id = ? filter down into every arm and reads
-- one session's rows.
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
SELECT l.session_id, l.taskid, json_extract(l.task, '$.status'), json_extract(l.task, '$.subject'),
       json_extract(l.task, '$.description'),
       -- created_at: the projection's, the parent's for a first task not projected yet, or the
       -- time of the task's first change past the projection (its TaskCreate, if there).
       coalesce((SELECT p.created_at FROM task_projection p WHERE p.session_id = l.session_id AND p.taskid = l.taskid),
                (SELECT pp.created_at FROM snapshots b JOIN sessions s ON s.id = b.session_id
                 JOIN task_projection pp ON pp.session_id = s.parent_id AND pp.taskid = l.taskid
                 WHERE b.session_id = l.session_id AND b.projected = 0),
                l.first_at),
       l.updated_at
FROM (
    -- The latest change of each task past the projection; SQLite takes the
    -- bare columns from the row holding max(seq).
    SELECT c.session_id, c.taskid, json_extract(c.result, '$.structuredContent.task') AS task, max(c.seq) AS seq,
           c.created_at AS updated_at, (SELECT f.created_at FROM tool_calls f
               WHERE f.session_id = c.session_id AND f.seq > s.projected_seq AND f.taskid = c.taskid ORDER BY f.seq LIMIT 1) AS first_at
    FROM sessions s JOIN tool_calls c ON c.session_id = s.id AND c.seq > s.projected_seq
    WHERE c.taskid IS NOT NULL
    GROUP BY c.session_id, c.taskid
) l;

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

-- +goose Down
-- The previous schema expects every successor's tasks in task_projection.
INSERT INTO task_projection (session_id, taskid, status, subject, description, created_at, updated_at)
SELECT b.session_id, pp.taskid, pp.status, pp.subject, pp.description, pp.created_at, s.created_at
FROM snapshots b JOIN sessions s ON s.id = b.session_id JOIN task_projection pp ON pp.session_id = s.parent_id
WHERE b.projected = 0
ON CONFLICT DO NOTHING;
DROP VIEW session_overview;
DROP VIEW open_tasks;
DROP VIEW tasks;
ALTER TABLE sessions ADD COLUMN snapshot TEXT;
UPDATE sessions SET snapshot = (SELECT b.snapshot FROM snapshots b WHERE b.session_id = sessions.id);
DROP TABLE snapshots;
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
    SELECT c.session_id, c.taskid, json_extract(c.result, '$.structuredContent.task') AS task, max(c.seq) AS seq,
           c.created_at AS updated_at
    FROM sessions s JOIN tool_calls c ON c.session_id = s.id AND c.seq > s.projected_seq
    WHERE c.taskid IS NOT NULL
    GROUP BY c.session_id, c.taskid
) l;
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
