-- Golden EXPLAIN of upserts: INSERT OR REPLACE (and INSERT on a table with
-- write.upsert.enabled) writes equality deletes of the new rows' keys plus the rows, in
-- one snapshot, without reading the table; a later scan applies those deletes to the
-- older files of their partition only.
-- Format: tests/support/scenario_script.py; runner: tests/sql/test_golden_scripts.py
-- (ICEDUCK_UPDATE_GOLDEN=1 rewrites the "-- expect:" blocks from iceduck's output).

-- step: iceduck
CREATE NAMESPACE shop

-- step: iceduck
CREATE TABLE shop.customers (id bigint NOT NULL, name string, tier string)
USING iceberg PARTITIONED BY (bucket(2, id))

-- step: iceduck
ALTER TABLE shop.customers SET IDENTIFIER FIELDS id

-- step: iceduck
INSERT INTO shop.customers SELECT i, 'c' || i, 'basic' FROM range(10) r(i)

-- A plain INSERT appends.
-- step: iceduck
EXPLAIN INSERT INTO shop.customers VALUES (10, 'c10', 'basic')
-- expect:
-- Iceberg write to shop.customers (branch main)
--   write: append: the new rows as data files, in one append snapshot; the table is not read

-- INSERT OR REPLACE replaces the rows with the same key.
-- step: iceduck
EXPLAIN INSERT OR REPLACE INTO shop.customers VALUES (3, 'c3', 'gold')
-- expect:
-- Iceberg write to shop.customers (branch main)
--   write: upsert by identifier fields (id): equality deletes of the new rows' keys, one file per partition, plus the new rows, in one snapshot; the table is not read

-- step: iceduck
INSERT OR REPLACE INTO shop.customers VALUES (3, 'c3', 'gold'), (4, 'c4', 'gold'), (42, 'c42', 'new')

-- step: iceduck
SELECT id || ' ' || name || ' ' || tier FROM shop.customers WHERE tier <> 'basic' ORDER BY id
-- expect:
-- 3 c3 gold
-- 4 c4 gold
-- 42 c42 new

-- The scan applies each partition's equality delete file to that partition's older file.
-- step: iceduck
EXPLAIN SELECT count(*) FROM shop.customers
-- expect:
-- Iceberg scan of iceduck.shop.customers
--   snapshot: <snapshot 2> (current snapshot of main)
--   schema id: 1
--   pushed filter: none
--   manifests: 3 total, 3 read, 0 skipped
--   data files: 4 read, 0 skipped (0 by partition, 0 by column metrics)
--   rows in files read: 13
--   delete files applied: 2 (0 position, 0 deletion vector, 2 equality)
--   files read:
--     <warehouse>/shop/customers/data/id_bucket=0/<file>.parquet (2 rows)
--     <warehouse>/shop/customers/data/id_bucket=0/<file>.parquet (4 rows, 1 equality delete file(s))
--     <warehouse>/shop/customers/data/id_bucket=1/<file>.parquet (1 rows)
--     <warehouse>/shop/customers/data/id_bucket=1/<file>.parquet (6 rows, 1 equality delete file(s))
--   delete files:
--     <warehouse>/shop/customers/data/id_bucket=0/<file>.parquet (equality, 2 rows)
--     <warehouse>/shop/customers/data/id_bucket=1/<file>.parquet (equality, 1 rows)

-- With write.upsert.enabled, a plain INSERT is an upsert too (Flink's property).
-- step: iceduck
ALTER TABLE shop.customers SET TBLPROPERTIES ('write.upsert.enabled'='true')

-- step: iceduck
EXPLAIN INSERT INTO shop.customers VALUES (4, 'c4', 'basic')
-- expect:
-- Iceberg write to shop.customers (branch main)
--   write: upsert by identifier fields (id): equality deletes of the new rows' keys, one file per partition, plus the new rows, in one snapshot; the table is not read (write.upsert.enabled=true)

-- On such a table a DELETE naming keys only is written as equality deletes too.
-- step: iceduck
EXPLAIN DELETE FROM shop.customers WHERE id IN (4, 5)
-- expect:
-- Iceberg write to shop.customers (branch main)
--   write: delete by key (id): equality deletes of the keys the condition names, one file per partition, in one delete snapshot; the table is not read (write.upsert.enabled=true)

-- Any other DELETE reads the rows it matches, by the table's write.delete.mode.
-- step: iceduck
EXPLAIN DELETE FROM shop.customers WHERE id > 4
-- expect:
-- Iceberg write to shop.customers (branch main)
--   write: copy-on-write: the data files holding changed rows are rewritten without them
--   mode: write.delete.mode=copy-on-write
--   isolation: write.delete.isolation-level=serializable
--   reads: the rows of shop.customers the DELETE matches (data files pruned by the condition's columns and partitions)
