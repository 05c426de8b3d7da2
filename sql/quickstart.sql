-- The README's 60-second tour as a script:  iceduck warehouse -f sql/quickstart.sql
-- The same statements as the tour (tests/test_readme.py checks it), so it builds shop.orders,
-- changes it, travels back in time and looks at its metadata; it starts over when run again.

CREATE NAMESPACE IF NOT EXISTS shop;
DROP TABLE IF EXISTS shop.orders PURGE;

-- Spark/Iceberg DDL, as a pipeline would write it: a v3 table whose deletes are deletion vectors
CREATE TABLE shop.orders (id bigint NOT NULL, customer string, amount decimal(10,2), ts timestamp)
USING iceberg PARTITIONED BY (days(ts), bucket(8, id))
TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read');

INSERT INTO shop.orders SELECT i, 'c' || (i % 50), i % 97, TIMESTAMP '2024-05-01' + to_minutes(i)
FROM range(100000) r(i);

SELECT customer, sum(amount) FROM shop.orders WHERE ts < '2024-05-02' GROUP BY 1 ORDER BY 2 DESC LIMIT 3;

-- name this snapshot: a tag (Spark's ALTER TABLE ... CREATE TAG)
ALTER TABLE shop.orders CREATE TAG loaded;

-- a row-level delete on this v3 merge-on-read table: deletion vectors (Puffin blobs)
DELETE FROM shop.orders WHERE customer = 'c7';

-- every commit is a snapshot: read the table as it was at the tag (or at a snapshot id, or a time)
SELECT count(*) FROM shop.orders VERSION AS OF 'loaded';

-- Spark's metadata tables
SELECT snapshot_id, operation, summary FROM shop.orders.snapshots;
SELECT file_path, record_count FROM shop.orders.files;

-- what planning kept and skipped
EXPLAIN SELECT * FROM shop.orders WHERE id = 4242 AND ts >= '2024-05-03';
