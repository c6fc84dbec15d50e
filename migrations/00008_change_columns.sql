-- +goose Up
-- A successful write's change, in columns of its own: the task's status
-- after the call, and the subject and description when the call set them
-- (NULL when it left them as they were). The tasks view and the projector
-- read these, not the result: a write's result is now stored once,
-- without the text rendered from it, and its echo of the task shortens a
-- long description.
ALTER TABLE tool_calls ADD COLUMN status TEXT;
ALTER TABLE tool_calls ADD COLUMN subject TEXT;
ALTER TABLE tool_calls ADD COLUMN description TEXT;
-- Earlier rows take the task their result echoed, whole (replay checks
-- against it; its description may have been shortened).
UPDATE tool_calls SET
    status = json_extract(result, '$.structuredContent.task.status'),
    subject = json_extract(result, '$.structuredContent.task.subject'),
    description = json_extract(result, '$.structuredContent.task.description')
WHERE taskid IS NOT NULL;

DROP VIEW session_overview;
DROP VIEW open_tasks;
DROP VIEW tasks;

-- Three layers, each hiding the ones before it: a successor's first tasks
-- (its parent's projection) until they are projected, the projection, and
-- the log rows past each session's projected_seq, where a task's status is
-- its latest row's and its subject and description the latest a row set.
-- Written without CTEs, so that SQLite pushes a session_id = ? filter down
-- into every arm and reads one session's rows.
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

-- +goose Down
-- Stored results of changes lack their text, which the previous version
-- wrote: it reads them only to answer a retry, as the recorded result.
DROP VIEW session_overview;
DROP VIEW open_tasks;
DROP VIEW tasks;
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
       coalesce((SELECT p.created_at FROM task_projection p WHERE p.session_id = l.session_id AND p.taskid = l.taskid),
                (SELECT pp.created_at FROM snapshots b JOIN sessions s ON s.id = b.session_id
                 JOIN task_projection pp ON pp.session_id = s.parent_id AND pp.taskid = l.taskid
                 WHERE b.session_id = l.session_id AND b.projected = 0),
                l.first_at),
       l.updated_at
FROM (
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
ALTER TABLE tool_calls DROP COLUMN description;
ALTER TABLE tool_calls DROP COLUMN subject;
ALTER TABLE tool_calls DROP COLUMN status;
