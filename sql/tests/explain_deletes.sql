-- Golden EXPLAIN: the delete files a scan applies -- position deletes (v2 merge-on-read),
-- deletion vectors (v3), and equality deletes (the checked-in Spark table
-- tests/fixtures/spark/dml/eq_delete_v2: iceduck does not write equality deletes).
-- Format: tests/support/scenario_script.py; runner: tests/sql/test_golden_scripts.py
-- (ICEDUCK_UPDATE_GOLDEN=1 rewrites the "-- expect:" blocks from iceduck's output).

-- step: iceduck
CREATE NAMESPACE shop

-- step: iceduck
CREATE TABLE shop.pos (id bigint, cat string) USING iceberg PARTITIONED BY (cat)
TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')

-- step: iceduck
INSERT INTO shop.pos SELECT i, CASE WHEN i < 10 THEN 'a' ELSE 'b' END FROM range(20) r(i)

-- step: iceduck
DELETE FROM shop.pos WHERE id IN (1, 2, 15)

-- A position-delete file per partition, each applied to its partition's data file.
-- step: iceduck
EXPLAIN SELECT * FROM shop.pos
-- expect:
-- Iceberg scan of iceduck.shop.pos
--   snapshot: <snapshot 2> (current snapshot of main)
--   schema id: 0
--   pushed filter: none
--   manifests: 2 total, 2 read, 0 skipped
--   data files: 2 read, 0 skipped (0 by partition, 0 by column metrics)
--   rows in files read: 20
--   delete files applied: 2 (2 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/pos/data/cat=a/<file>.parquet (10 rows, 1 position delete file(s))
--     <warehouse>/shop/pos/data/cat=b/<file>.parquet (10 rows, 1 position delete file(s))
--   delete files:
--     <warehouse>/shop/pos/data/<file>.parquet (position, 1 rows)
--     <warehouse>/shop/pos/data/<file>.parquet (position, 2 rows)

-- Pruning by partition drops the deletes of the pruned partition too.
-- step: iceduck
EXPLAIN SELECT * FROM shop.pos WHERE cat = 'b'
-- expect:
-- Iceberg scan of iceduck.shop.pos
--   snapshot: <snapshot 2> (current snapshot of main)
--   schema id: 0
--   pushed filter: cat == 'b'
--   manifests: 2 total, 2 read, 0 skipped
--   data files: 1 read, 1 skipped (1 by partition, 0 by column metrics)
--   rows in files read: 10
--   delete files applied: 1 (1 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/pos/data/cat=b/<file>.parquet (10 rows, 1 position delete file(s))
--   delete files:
--     <warehouse>/shop/pos/data/<file>.parquet (position, 1 rows)

-- step: iceduck
CREATE TABLE shop.dv (id bigint, cat string) USING iceberg
TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read')

-- step: iceduck
INSERT INTO shop.dv SELECT i, 'a' FROM range(20) r(i)

-- step: iceduck
DELETE FROM shop.dv WHERE id % 4 = 0

-- A second DELETE merges into the same vector: still one per data file.
-- step: iceduck
DELETE FROM shop.dv WHERE id = 7

-- step: iceduck
EXPLAIN SELECT * FROM shop.dv
-- expect:
-- Iceberg scan of iceduck.shop.dv
--   snapshot: <snapshot 3> (current snapshot of main)
--   schema id: 0
--   pushed filter: none
--   manifests: 3 total, 2 read, 1 skipped
--   data files: 1 read, 0 skipped (0 by partition, 0 by column metrics)
--   rows in files read: 20
--   delete files applied: 1 (0 position, 1 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/dv/data/<file>.parquet (20 rows, a deletion vector)
--   delete files:
--     <warehouse>/shop/dv/data/<file>.puffin (deletion vector, 6 rows)

-- A DELETE covering a whole file drops it: no deletes left to apply.
-- step: iceduck
DELETE FROM shop.dv WHERE id >= 0

-- step: iceduck
EXPLAIN SELECT * FROM shop.dv
-- expect:
-- Iceberg scan of iceduck.shop.dv
--   snapshot: <snapshot 4> (current snapshot of main)
--   schema id: 0
--   pushed filter: none
--   manifests: 2 total, 0 read, 2 skipped
--   data files: 0 read, 0 skipped (0 by partition, 0 by column metrics)
--   rows in files read: 0
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)

-- Equality deletes on id, on name and on (id, cat), and Spark's position delete, written by
-- Spark 3.5 + Iceberg 1.10.2; the sequence numbers decide which data files each applies to.
-- step: iceduck
EXPLAIN SELECT * FROM iceduck_scan('$fixtures/dml/eq_delete_v2')
-- expect:
-- Iceberg scan of iceduck_scan('<fixtures>/dml/eq_delete_v2')
--   snapshot: 8562452448612070732 (current snapshot of main)
--   schema id: 1
--   pushed filter: none
--   manifests: 6 total, 6 read, 0 skipped
--   data files: 3 read, 0 skipped (0 by partition, 0 by column metrics)
--   rows in files read: 31
--   delete files applied: 4 (1 position, 0 deletion vector, 3 equality)
--   files read:
--     <fixtures>/dml/eq_delete_v2/data/<file>.parquet (1 rows)
--     <fixtures>/dml/eq_delete_v2/data/<file>.parquet (15 rows, 1 position delete file(s), 2 equality delete file(s))
--     <fixtures>/dml/eq_delete_v2/data/<file>.parquet (15 rows, 2 equality delete file(s))
--   delete files:
--     <fixtures>/dml/eq_delete_v2/data/<file>.parquet (equality, 2 rows)
--     <fixtures>/dml/eq_delete_v2/data/<file>.parquet (equality, 3 rows)
--     <fixtures>/dml/eq_delete_v2/data/<file>.parquet (equality, 3 rows)
--     <fixtures>/dml/eq_delete_v2/data/<file>.parquet (position, 1 rows)

-- step: iceduck
EXPLAIN SELECT * FROM iceduck_scan('$fixtures/dml/eq_delete_v2') WHERE id = 7
-- expect:
-- Iceberg scan of iceduck_scan('<fixtures>/dml/eq_delete_v2')
--   snapshot: 8562452448612070732 (current snapshot of main)
--   schema id: 1
--   pushed filter: id == 7
--   manifests: 6 total, 6 read, 0 skipped
--   data files: 2 read, 1 skipped (0 by partition, 1 by column metrics)
--   rows in files read: 16
--   delete files applied: 2 (0 position, 0 deletion vector, 2 equality)
--   files read:
--     <fixtures>/dml/eq_delete_v2/data/<file>.parquet (1 rows)
--     <fixtures>/dml/eq_delete_v2/data/<file>.parquet (15 rows, 2 equality delete file(s))
--   delete files:
--     <fixtures>/dml/eq_delete_v2/data/<file>.parquet (equality, 2 rows)
--     <fixtures>/dml/eq_delete_v2/data/<file>.parquet (equality, 3 rows)
