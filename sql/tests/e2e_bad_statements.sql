-- Bad statements (issue 4: "fail with a clear error and leave the table unchanged"): each must
-- raise the named iceduck error kind; the runner then checks the catalog still points at the
-- same metadata file, no file appeared or vanished under the table, and the rows are the same.
-- Parameters: $ns, $fv, $mode, $writer.

-- step: iceduck
CREATE NAMESPACE $ns

-- step: iceduck
-- table: $ns.t
CREATE TABLE $ns.t (id int NOT NULL, s string, flag boolean, n bigint, ts timestamp) USING iceberg
PARTITIONED BY (bucket(4, id))
TBLPROPERTIES ('format-version'='$fv', 'write.delete.mode'='$mode', 'write.update.mode'='$mode')

-- step: iceduck
INSERT INTO $ns.t VALUES (1, 'one', true, 10, TIMESTAMP '2024-01-01 00:00:00'), (2, 'two', false, 20, NULL)

-- Type mismatch on INSERT.
-- step: iceduck error=ValidationError
INSERT INTO $ns.t VALUES ('not a number', 'x', true, 1, TIMESTAMP '2024-01-01 00:00:00')

-- NOT NULL violations, by INSERT and by UPDATE.
-- step: iceduck error=ValidationError
INSERT INTO $ns.t VALUES (NULL, 'null id', true, 1, NULL)

-- step: iceduck error=ValidationError
UPDATE $ns.t SET id = NULL WHERE id = 1

-- Disallowed promotions.
-- step: iceduck error=ValidationError
ALTER TABLE $ns.t ALTER COLUMN s TYPE int

-- step: iceduck error=ValidationError
ALTER TABLE $ns.t ALTER COLUMN n TYPE int

-- Unknown columns.
-- step: iceduck error=UserError
INSERT INTO $ns.t (id, nope) VALUES (3, 3)

-- step: iceduck error=UserError
UPDATE $ns.t SET nope = 1 WHERE id = 1

-- step: iceduck error=UserError
DELETE FROM $ns.t WHERE nope = 1

-- step: iceduck error=UserError
ALTER TABLE $ns.t DROP COLUMN nope

-- step: iceduck error=UserError
ALTER TABLE $ns.t RENAME COLUMN nope TO other

-- A partition transform on a type it does not accept.
-- step: iceduck error=ValidationError
ALTER TABLE $ns.t ADD PARTITION FIELD bucket(4, flag)

-- step: iceduck error=ValidationError
CREATE TABLE $ns.bad (flag boolean) USING iceberg PARTITIONED BY (bucket(4, flag))

-- step: iceduck error=ValidationError
ALTER TABLE $ns.t ADD PARTITION FIELD days(s)

-- MERGE: an unconditional clause before another of its kind could never let the later one
-- apply (Spark: NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION and siblings; DuckDB refuses it too).
-- step: iceduck error=UserError
MERGE INTO $ns.t USING (SELECT 1 AS id) s ON $ns.t.id = s.id
WHEN MATCHED THEN DELETE WHEN MATCHED AND s.id > 1 THEN UPDATE SET s = 'never'

-- step: iceduck error=UserError
MERGE INTO $ns.t t USING (SELECT 9 AS id) s ON t.id = s.id
WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id) WHEN NOT MATCHED AND s.id > 1 THEN INSERT (id) VALUES (0)

-- Table properties Java refuses when they are set: metrics for a column the table does not
-- have (MetricsConfig.validateReferencedColumns), a negative commit retry count
-- (PropertyUtil.validateCommitProperties).
-- step: iceduck error=ValidationError
ALTER TABLE $ns.t SET TBLPROPERTIES ('write.metadata.metrics.column.nope'='full')

-- step: iceduck error=ValidationError
CREATE TABLE $ns.bad (a int) USING iceberg TBLPROPERTIES ('commit.retry.num-retries'='-1')

-- step: iceduck error=ValidationError
CREATE TABLE $ns.bad (a int) USING iceberg TBLPROPERTIES ('write.metadata.metrics.column.b'='counts')

-- The table still takes writes after all of the above, naming its columns by the table's
-- full name too (Spark and DuckDB accept $ns.t.id where the table has no alias).
-- step: iceduck
UPDATE $ns.t SET n = $ns.t.n + 1 WHERE $ns.t.id = 1

-- step: iceduck
MERGE INTO $ns.t USING (SELECT 1 AS id, 'merged' AS s) src ON $ns.t.id = src.id
WHEN MATCHED AND $ns.t.n > 100 THEN DELETE WHEN MATCHED THEN UPDATE SET s = src.s || $ns.t.s

-- step: iceduck
INSERT INTO $ns.t VALUES (3, 'three', NULL, NULL, TIMESTAMP '2024-01-03 00:00:00')

-- step: iceduck error=UserError
INSERT INTO $ns.t VALUES (4, 'too few columns')

-- step: iceduck
DELETE FROM $ns.t WHERE id = 2
