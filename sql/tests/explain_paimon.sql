-- Golden EXPLAIN of Paimon scans: what the manifest lists, partition values, buckets and key
-- statistics let iceduck skip, and which version a tag or snapshot id reads, on the
-- pypaimon-written warehouse of examples/paimon (customers: primary key, 2 buckets, a tag;
-- events: append-only, partitioned by day).
-- Format: tests/support/scenario_script.py; runner: tests/sql/test_golden_scripts.py
-- (ICEDUCK_UPDATE_GOLDEN=1 rewrites the "-- expect:" blocks from iceduck's output).

-- step: iceduck
ATTACH '$examples/paimon/warehouse' AS lake (TYPE paimon)

-- No filter: both manifests of the two commits, every file.
-- step: iceduck
EXPLAIN SELECT count(*) FROM lake.shop.events
-- expect:
-- Paimon scan of lake.shop.events (append-only)
--   snapshot: 2 (latest snapshot)
--   schema id: 0
--   pushed filter: none
--   manifests: 2 total, 2 read, 0 skipped
--   data files: 2 read, 0 skipped (0 by partition, 0 by bucket, 0 by key/value stats, 0 at level 0)
--   rows in files read: 5
--   deletion vectors applied: 0
--   splits: 0 merged, 2 read raw
--   files read:
--     <examples>/paimon/warehouse/shop.db/events/day=2024-05-01/bucket-0/<file>.parquet (level 0, 3 rows)
--     <examples>/paimon/warehouse/shop.db/events/day=2024-05-02/bucket-0/<file>.parquet (level 0, 2 rows)

-- A partition filter: the other day's manifest is skipped by its partition statistics.
-- step: iceduck
EXPLAIN SELECT * FROM lake.shop.events WHERE day = '2024-05-02'
-- expect:
-- Paimon scan of lake.shop.events (append-only)
--   snapshot: 2 (latest snapshot)
--   schema id: 0
--   pushed filter: day == '2024-05-02'
--   manifests: 2 total, 1 read, 1 skipped
--   data files: 1 read, 0 skipped (0 by partition, 0 by bucket, 0 by key/value stats, 0 at level 0)
--   rows in files read: 2
--   deletion vectors applied: 0
--   splits: 0 merged, 1 read raw
--   files read:
--     <examples>/paimon/warehouse/shop.db/events/day=2024-05-02/bucket-0/<file>.parquet (level 0, 2 rows)

-- A key: one bucket of two, and the key conditions drop other keys before the merge.
-- step: iceduck
EXPLAIN SELECT * FROM lake.shop.customers WHERE id = 2
-- expect:
-- Paimon scan of lake.shop.customers (primary-key)
--   snapshot: 3 (latest snapshot)
--   schema id: 0
--   pushed filter: id == 2
--   manifests: 3 total, 3 read, 0 skipped
--   data files: 2 read, 2 skipped (0 by partition, 2 by bucket, 0 by key/value stats, 0 at level 0)
--   rows in files read: 4
--   deletion vectors applied: 0
--   splits: 1 merged, 0 read raw
--   files read:
--     <examples>/paimon/warehouse/shop.db/customers/bucket-0/<file>.parquet (level 0, 2 rows)
--     <examples>/paimon/warehouse/shop.db/customers/bucket-0/<file>.parquet (level 0, 2 rows)

-- A value condition cannot prune a table that needs merging.
-- step: iceduck
EXPLAIN SELECT * FROM lake.shop.customers WHERE city = 'Paris'
-- expect:
-- Paimon scan of lake.shop.customers (primary-key)
--   snapshot: 3 (latest snapshot)
--   schema id: 0
--   pushed filter: city == 'Paris'
--   manifests: 3 total, 3 read, 0 skipped
--   data files: 4 read, 0 skipped (0 by partition, 0 by bucket, 0 by key/value stats, 0 at level 0)
--   rows in files read: 6
--   deletion vectors applied: 0
--   splits: 2 merged, 0 read raw
--   files read:
--     <examples>/paimon/warehouse/shop.db/customers/bucket-0/<file>.parquet (level 0, 2 rows)
--     <examples>/paimon/warehouse/shop.db/customers/bucket-0/<file>.parquet (level 0, 2 rows)
--     <examples>/paimon/warehouse/shop.db/customers/bucket-1/<file>.parquet (level 0, 1 rows)
--     <examples>/paimon/warehouse/shop.db/customers/bucket-1/<file>.parquet (level 0, 1 rows)

-- The tag and a snapshot id: the first commit's files only.
-- step: iceduck
EXPLAIN SELECT * FROM lake.shop.customers VERSION AS OF 'launch'
-- expect:
-- Paimon scan of lake.shop.customers (primary-key)
--   snapshot: 1 (tag launch)
--   schema id: 0
--   pushed filter: none
--   manifests: 1 total, 1 read, 0 skipped
--   data files: 2 read, 0 skipped (0 by partition, 0 by bucket, 0 by key/value stats, 0 at level 0)
--   rows in files read: 3
--   deletion vectors applied: 0
--   splits: 2 merged, 0 read raw
--   files read:
--     <examples>/paimon/warehouse/shop.db/customers/bucket-0/<file>.parquet (level 0, 2 rows)
--     <examples>/paimon/warehouse/shop.db/customers/bucket-1/<file>.parquet (level 0, 1 rows)

-- step: iceduck
EXPLAIN SELECT * FROM lake.shop.customers VERSION AS OF 2
-- expect:
-- Paimon scan of lake.shop.customers (primary-key)
--   snapshot: 2 (VERSION AS OF 2)
--   schema id: 0
--   pushed filter: none
--   manifests: 2 total, 2 read, 0 skipped
--   data files: 3 read, 0 skipped (0 by partition, 0 by bucket, 0 by key/value stats, 0 at level 0)
--   rows in files read: 5
--   deletion vectors applied: 0
--   splits: 2 merged, 0 read raw
--   files read:
--     <examples>/paimon/warehouse/shop.db/customers/bucket-0/<file>.parquet (level 0, 2 rows)
--     <examples>/paimon/warehouse/shop.db/customers/bucket-0/<file>.parquet (level 0, 2 rows)
--     <examples>/paimon/warehouse/shop.db/customers/bucket-1/<file>.parquet (level 0, 1 rows)

-- A system table is built from the metadata, not planned.
-- step: iceduck
EXPLAIN SELECT * FROM lake.shop.customers.files
-- expect:
-- Paimon system table files of lake.shop.customers: 4 rows
