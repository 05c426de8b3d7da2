-- Golden EXPLAIN: which snapshot a scan reads -- the current one, a tag, a branch, VERSION AS
-- OF and Spark's ref names -- and what each snapshot's manifests hold.
-- Format: tests/support/scenario_script.py; runner: tests/sql/test_golden_scripts.py
-- (ICEDUCK_UPDATE_GOLDEN=1 rewrites the "-- expect:" blocks from iceduck's output).

-- step: iceduck
CREATE NAMESPACE shop

-- step: iceduck
CREATE TABLE shop.t (id bigint, s string) USING iceberg TBLPROPERTIES ('format-version' = '2')

-- snapshot 1
-- step: iceduck
INSERT INTO shop.t VALUES (1, 'one'), (2, 'two')

-- step: iceduck
ALTER TABLE shop.t CREATE TAG first

-- snapshot 2
-- step: iceduck
INSERT INTO shop.t VALUES (3, 'three')

-- step: iceduck
ALTER TABLE shop.t CREATE BRANCH dev

-- snapshot 3, on dev only
-- step: iceduck
INSERT INTO shop.t.branch_dev VALUES (10, 'ten')

-- snapshot 4, on main: a schema change does not commit a snapshot, the insert does
-- step: iceduck
ALTER TABLE shop.t ADD COLUMN note string

-- step: iceduck
INSERT INTO shop.t VALUES (4, 'four', 'new')

-- step: iceduck
EXPLAIN SELECT * FROM shop.t
-- expect:
-- Iceberg scan of iceduck.shop.t
--   snapshot: <snapshot 4> (current snapshot of main)
--   schema id: 1
--   pushed filter: none
--   manifests: 3 total, 3 read, 0 skipped
--   data files: 3 read, 0 skipped (0 by partition, 0 by column metrics)
--   rows in files read: 4
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/t/data/<file>.parquet (1 rows)
--     <warehouse>/shop/t/data/<file>.parquet (1 rows)
--     <warehouse>/shop/t/data/<file>.parquet (2 rows)

-- step: iceduck
EXPLAIN SELECT * FROM shop.t VERSION AS OF 'first'
-- expect:
-- Iceberg scan of iceduck.shop.t
--   snapshot: <snapshot 1> (VERSION AS OF 'first')
--   schema id: 0
--   pushed filter: none
--   manifests: 1 total, 1 read, 0 skipped
--   data files: 1 read, 0 skipped (0 by partition, 0 by column metrics)
--   rows in files read: 2
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/t/data/<file>.parquet (2 rows)

-- step: iceduck
EXPLAIN SELECT * FROM shop.t.tag_first
-- expect:
-- Iceberg scan of iceduck.shop.t
--   snapshot: <snapshot 1> (tag first)
--   schema id: 0
--   pushed filter: none
--   manifests: 1 total, 1 read, 0 skipped
--   data files: 1 read, 0 skipped (0 by partition, 0 by column metrics)
--   rows in files read: 2
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/t/data/<file>.parquet (2 rows)

-- step: iceduck
EXPLAIN SELECT * FROM shop.t.branch_dev WHERE id = 10
-- expect:
-- Iceberg scan of iceduck.shop.t
--   snapshot: <snapshot 3> (branch dev)
--   schema id: 1
--   pushed filter: id == 10
--   manifests: 3 total, 3 read, 0 skipped
--   data files: 1 read, 2 skipped (0 by partition, 2 by column metrics)
--   rows in files read: 1
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/t/data/<file>.parquet (1 rows)

-- step: iceduck
EXPLAIN SELECT * FROM shop.t FOR SYSTEM_VERSION AS OF 'dev'
-- expect:
-- Iceberg scan of iceduck.shop.t
--   snapshot: <snapshot 3> (VERSION AS OF 'dev')
--   schema id: 1
--   pushed filter: none
--   manifests: 3 total, 3 read, 0 skipped
--   data files: 3 read, 0 skipped (0 by partition, 0 by column metrics)
--   rows in files read: 4
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/t/data/<file>.parquet (1 rows)
--     <warehouse>/shop/t/data/<file>.parquet (1 rows)
--     <warehouse>/shop/t/data/<file>.parquet (2 rows)

-- A snapshot id of the checked-in Spark table (ids are fixed there): before its DELETE.
-- step: iceduck
EXPLAIN SELECT * FROM iceduck_scan('$fixtures/deletes/position_v2') VERSION AS OF 6335146090560024140
-- expect:
-- Iceberg scan of iceduck_scan('<fixtures>/deletes/position_v2')
--   snapshot: 6335146090560024140 (VERSION AS OF 6335146090560024140)
--   schema id: 0
--   pushed filter: none
--   manifests: 1 total, 1 read, 0 skipped
--   data files: 1 read, 0 skipped (0 by partition, 0 by column metrics)
--   rows in files read: 20
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <fixtures>/deletes/position_v2/data/<file>.parquet (20 rows)

-- step: iceduck
EXPLAIN SELECT * FROM iceduck_scan('$fixtures/deletes/position_v2')
-- expect:
-- Iceberg scan of iceduck_scan('<fixtures>/deletes/position_v2')
--   snapshot: 3971988270224251319 (current snapshot of main)
--   schema id: 0
--   pushed filter: none
--   manifests: 2 total, 2 read, 0 skipped
--   data files: 1 read, 0 skipped (0 by partition, 0 by column metrics)
--   rows in files read: 20
--   delete files applied: 1 (1 position, 0 deletion vector, 0 equality)
--   files read:
--     <fixtures>/deletes/position_v2/data/<file>.parquet (20 rows, 1 position delete file(s))
--   delete files:
--     <fixtures>/deletes/position_v2/data/<file>.parquet (position, 5 rows)
