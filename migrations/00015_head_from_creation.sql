-- +goose Up
-- Every session has a head from its creation: seq 0 and its chain's start
-- until its first row is logged, so that a session without one is damage,
-- never an empty log. Before this, a root session whose rows and head
-- were deleted together was served as an empty list, and nothing said it
-- had ever had calls.
--
-- log_heads is made again to take seq 0 (a CHECK cannot be altered in
-- place), and every session without a head and without rows (a root
-- session that never logged a call; its chain starts at 0) gets its seq-0
-- head. A session that has rows but no head is left without one: the
-- chain checks each row against the one before it, but only the head says
-- where the log ended, so a head rebuilt from the rows would accept a log
-- cut short at its end. Such a session was refused before this migration
-- (its rows past a head at seq 0) and stays refused, now saying its head
-- is missing; fsck names it and the statement that accepts its log as it
-- stands. A successor without rows is refused either way (its forced
-- TaskList is logged in its compaction's transaction) and is left too.
-- What this cannot tell apart: a root session whose rows and head were
-- both deleted before this migration ran looks like one that never had a
-- call, and gets a seq-0 head.
CREATE TABLE log_heads_0 (
    session_id TEXT    PRIMARY KEY,
    seq        INTEGER NOT NULL CHECK (seq >= 0),
    checksum   INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

INSERT INTO log_heads_0 (session_id, seq, checksum) SELECT session_id, seq, checksum FROM log_heads;

DROP TABLE log_heads;

ALTER TABLE log_heads_0 RENAME TO log_heads;

INSERT INTO log_heads (session_id, seq, checksum)
SELECT s.id, 0, 0 FROM sessions s
WHERE NOT EXISTS (SELECT 1 FROM log_heads h WHERE h.session_id = s.id)
    AND NOT EXISTS (SELECT 1 FROM tool_calls t WHERE t.session_id = s.id)
    AND NOT EXISTS (SELECT 1 FROM snapshots b WHERE b.session_id = s.id)
    AND s.parent_id IS NULL;

-- +goose Down
DELETE FROM log_heads WHERE seq = 0;

CREATE TABLE log_heads_1 (
    session_id TEXT    PRIMARY KEY,
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    checksum   INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

INSERT INTO log_heads_1 (session_id, seq, checksum) SELECT session_id, seq, checksum FROM log_heads;

DROP TABLE log_heads;

ALTER TABLE log_heads_1 RENAME TO log_heads;
