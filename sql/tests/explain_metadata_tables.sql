-- Golden EXPLAIN: metadata tables are built from the table's metadata, not scanned; a query
-- joining one with its table explains both.
-- Format: tests/support/scenario_script.py; runner: tests/sql/test_golden_scripts.py
-- (ICEDUCK_UPDATE_GOLDEN=1 rewrites the "-- expect:" blocks from iceduck's output).

-- step: iceduck
CREATE NAMESPACE shop

-- step: iceduck
CREATE TABLE shop.t (id bigint, cat string) USING iceberg PARTITIONED BY (cat)
TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read')

-- step: iceduck
INSERT INTO shop.t VALUES (1, 'a'), (2, 'a'), (3, 'b')

-- step: iceduck
INSERT INTO shop.t VALUES (4, 'c')

-- step: iceduck
DELETE FROM shop.t WHERE id = 2

-- step: iceduck
EXPLAIN SELECT * FROM shop.t.snapshots
-- expect:
-- Iceberg metadata table iceduck.shop.t.snapshots: 3 rows, built from the table's metadata

-- step: iceduck
EXPLAIN SELECT file_path, record_count FROM shop.t.files
-- expect:
-- Iceberg metadata table iceduck.shop.t.files: 4 rows, built from the table's metadata

-- step: iceduck
EXPLAIN SELECT * FROM shop.t.manifests
-- expect:
-- Iceberg metadata table iceduck.shop.t.manifests: 3 rows, built from the table's metadata

-- step: iceduck
EXPLAIN SELECT * FROM shop.t.entries WHERE status = 1
-- expect:
-- Iceberg metadata table iceduck.shop.t.entries: 4 rows, built from the table's metadata

-- step: iceduck
EXPLAIN SELECT * FROM shop.t.history
-- expect:
-- Iceberg metadata table iceduck.shop.t.history: 3 rows, built from the table's metadata

-- step: iceduck
EXPLAIN SELECT * FROM shop.t.delete_files
-- expect:
-- Iceberg metadata table iceduck.shop.t.delete_files: 1 rows, built from the table's metadata

-- step: iceduck
EXPLAIN SELECT * FROM shop.t.partitions
-- expect:
-- Iceberg metadata table iceduck.shop.t.partitions: 3 rows, built from the table's metadata

-- step: iceduck
EXPLAIN SELECT f.record_count, count(t.id) FROM shop.t.files f JOIN shop.t t ON t._file = f.file_path
GROUP BY 1
-- expect:
-- Iceberg metadata table iceduck.shop.t.files: 4 rows, built from the table's metadata
-- Iceberg scan of iceduck.shop.t
--   snapshot: <snapshot 3> (current snapshot of main)
--   schema id: 0
--   pushed filter: none
--   manifests: 3 total, 3 read, 0 skipped
--   data files: 3 read, 0 skipped (0 by partition, 0 by column metrics)
--   rows in files read: 4
--   delete files applied: 1 (0 position, 1 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/t/data/cat=a/<file>.parquet (2 rows, a deletion vector)
--     <warehouse>/shop/t/data/cat=b/<file>.parquet (1 rows)
--     <warehouse>/shop/t/data/cat=c/<file>.parquet (1 rows)
--   delete files:
--     <warehouse>/shop/t/data/<file>.puffin (deletion vector, 1 rows)
