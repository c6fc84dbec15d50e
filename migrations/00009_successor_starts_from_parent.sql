-- +goose Up
-- A successor no longer stores the tasks it started from as JSON: they are
-- its parent's projection, which the compaction brings up to date in its
-- own transaction and which nothing changes after the seal. Such a
-- successor's snapshot is NULL (its row still says whether its first
-- tasks are projected); the JSON of earlier successors stays, and is read.
-- The table is rebuilt to drop NOT NULL; the views naming it are left as
-- they are (legacy_alter_table: the rename does not re-check them while
-- the old table is gone).
PRAGMA legacy_alter_table = ON;
CREATE TABLE snapshots_new (
    session_id TEXT    PRIMARY KEY REFERENCES sessions (id),
    -- NULL: the parent's projection; else {"tasks": [...], "nextTaskid": n}.
    snapshot   TEXT,
    projected  INTEGER NOT NULL DEFAULT 0 CHECK (projected IN (0, 1))
) STRICT;
INSERT INTO snapshots_new (session_id, snapshot, projected) SELECT session_id, snapshot, projected FROM snapshots;
DROP TABLE snapshots;
ALTER TABLE snapshots_new RENAME TO snapshots;
PRAGMA legacy_alter_table = OFF;
CREATE INDEX snapshots_unprojected ON snapshots (session_id) WHERE projected = 0;

-- +goose Down
-- The previous schema reads every successor's first tasks from its JSON:
-- written from the parent's projection where it is NULL.
UPDATE snapshots SET snapshot = (
    SELECT json_object('tasks', json((
               SELECT json_group_array(json_object('taskid', p.taskid, 'status', p.status, 'subject', p.subject, 'description', p.description))
               FROM (SELECT * FROM task_projection WHERE session_id = s.parent_id ORDER BY taskid) p)),
           'nextTaskid', coalesce((SELECT max(taskid) FROM task_projection WHERE session_id = s.parent_id), 0) + 1)
    FROM sessions s WHERE s.id = snapshots.session_id)
WHERE snapshot IS NULL;
PRAGMA legacy_alter_table = ON;
CREATE TABLE snapshots_old (
    session_id TEXT    PRIMARY KEY REFERENCES sessions (id),
    snapshot   TEXT    NOT NULL,
    projected  INTEGER NOT NULL DEFAULT 0 CHECK (projected IN (0, 1))
) STRICT;
INSERT INTO snapshots_old (session_id, snapshot, projected) SELECT session_id, snapshot, projected FROM snapshots;
DROP TABLE snapshots;
ALTER TABLE snapshots_old RENAME TO snapshots;
PRAGMA legacy_alter_table = OFF;
CREATE INDEX snapshots_unprojected ON snapshots (session_id) WHERE projected = 0;
