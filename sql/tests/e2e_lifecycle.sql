-- End-to-end lifecycle of one partitioned table (issue 4: items 1-3).
-- Parameters: $ns (namespace), $fv (format-version), $mode (write.delete/update/merge.mode).
-- Run by tests/interop/test_write_scenarios.py; the format is described in
-- tests/support/scenario_script.py. After every step iceduck's SELECT, Spark's SELECT and the
-- same statements on plain DuckDB tables (the reference) must agree.

-- step: iceduck
CREATE NAMESPACE $ns

-- step: iceduck
-- table: $ns.t
CREATE TABLE $ns.t (
    id bigint NOT NULL COMMENT 'the key',
    s string,
    cat string,
    ts timestamp,
    amount decimal(10, 2)
) USING iceberg
PARTITIONED BY (days(ts), bucket(16, id), truncate(4, s), cat)
TBLPROPERTIES ('format-version'='$fv', 'write.delete.mode'='$mode', 'write.update.mode'='$mode',
               'write.merge.mode'='$mode')

-- step: iceduck
INSERT INTO $ns.t VALUES
    (1, 'alpha', 'a', TIMESTAMP '2024-01-01 10:00:00', 1.50),
    (2, 'alphabet', 'a', TIMESTAMP '2024-01-01 11:30:00', 2.25),
    (3, 'beta', 'b', TIMESTAMP '2024-01-02 00:00:00', -3.00),
    (4, 'gamma ray', 'b', TIMESTAMP '2023-12-31 23:59:59.999999', 4.00),
    (5, NULL, 'c', TIMESTAMP '1969-12-31 23:00:00', NULL),
    (6, 'ü€😀 wide', 'c', NULL, 6.66),
    (7, 'delta', NULL, TIMESTAMP '2024-02-29 12:00:00', 7.00),
    (8, '', 'a', TIMESTAMP '2024-01-01 10:00:00', 0.01)

-- step: iceduck
INSERT INTO $ns.t SELECT id + 100, upper(s), cat, ts + INTERVAL 1 DAY, amount * 2 FROM $ns.t WHERE id <= 4

-- step: iceduck peers
INSERT INTO $ns.t VALUES (9, 'epsilon', 'd', TIMESTAMP '2024-03-01 08:00:00', 9.00)

-- Dynamic overwrite: replaces the partitions the new rows fall in and nothing else. The new
-- row of id 1 falls in the partition of the old rows 1 *and 2* (same day, 'alph', 'a', and
-- bucket(16, 1) = bucket(16, 2) = 4 by the spec's murmur3 hash); id 300 in one of its own.
-- step: iceduck
INSERT OVERWRITE $ns.t VALUES
    (1, 'alpha', 'a', TIMESTAMP '2024-01-01 09:00:00', 10.00),
    (300, 'omega', 'e', TIMESTAMP '2024-05-05 05:05:05', 30.00)
-- reference: DELETE FROM $ns.t WHERE id IN (1, 2);
-- reference: INSERT INTO $ns.t VALUES (1, 'alpha', 'a', TIMESTAMP '2024-01-01 09:00:00', 10.00),
-- reference:     (300, 'omega', 'e', TIMESTAMP '2024-05-05 05:05:05', 30.00)

-- Static overwrite: every row of cat = 'b' goes, whatever its other partition values.
-- step: iceduck
INSERT OVERWRITE $ns.t PARTITION (cat = 'b')
SELECT id + 1000, s, ts, amount FROM $ns.t WHERE cat = 'a' AND id < 100
-- reference: CREATE TEMP TABLE staged AS SELECT id + 1000 AS id, s, 'b' AS cat, ts, amount
-- reference:     FROM $ns.t WHERE cat = 'a' AND id < 100;
-- reference: DELETE FROM $ns.t WHERE cat = 'b';
-- reference: INSERT INTO $ns.t SELECT * FROM staged;
-- reference: DROP TABLE staged

-- A whole identity partition: files are dropped without reading them.
-- step: iceduck
DELETE FROM $ns.t WHERE cat = 'c'

-- step: iceduck peers
DELETE FROM $ns.t WHERE id = 2 OR s = 'ALPHABET'

-- Changing s moves rows to another truncate(4, s) partition.
-- step: iceduck
UPDATE $ns.t SET amount = amount + 1, s = concat(s, '-upd') WHERE cat = 'a' AND id < 100

-- step: iceduck
UPDATE $ns.t SET ts = NULL WHERE id = 7

-- step: iceduck peers
MERGE INTO $ns.t AS t
USING (SELECT * FROM (VALUES
        (1, 'merged', 'a', TIMESTAMP '2024-01-01 09:00:00', 11.00, 'u'),
        (101, 'gone', 'a', TIMESTAMP '2024-01-02 10:00:00', 0.00, 'd'),
        (400, 'inserted', 'f', TIMESTAMP '2024-06-01 00:00:00', 40.00, 'i'),
        (401, NULL, NULL, NULL, NULL, 'i')
    ) AS v(id, s, cat, ts, amount, op)) AS src
ON t.id = src.id
WHEN MATCHED AND src.op = 'd' THEN DELETE
WHEN MATCHED THEN UPDATE SET s = src.s, amount = src.amount
WHEN NOT MATCHED THEN INSERT (id, s, cat, ts, amount) VALUES (src.id, src.s, src.cat, src.ts, src.amount)
WHEN NOT MATCHED BY SOURCE AND t.cat = 'b' THEN DELETE

-- Rows 7 and 401 have a NULL ts: SQL keeps them. (Spark 3.5 + Iceberg 1.10 drops them: its
-- metadata-only delete removes files of the NULL day partition for `ts < X`; so when Spark runs
-- iceduck's steps, the script says `AND ts IS NOT NULL`, which means the same in SQL.)
-- step: iceduck when=writer:iceduck
DELETE FROM $ns.t WHERE ts < TIMESTAMP '2024-01-01 10:30:00'
-- step: iceduck when=writer:spark
DELETE FROM $ns.t WHERE ts < TIMESTAMP '2024-01-01 10:30:00' AND ts IS NOT NULL

-- step: iceduck peers
INSERT INTO $ns.t VALUES (2, 'alphabet', 'a', TIMESTAMP '2024-01-01 11:30:00', 2.25)
