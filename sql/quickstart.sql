-- iceduck quickstart: run with  iceduck WAREHOUSE -f sql/quickstart.sql
-- Creates quickstart.trips, changes it, travels back in time and looks at its metadata.

CREATE NAMESPACE IF NOT EXISTS quickstart;
DROP TABLE IF EXISTS quickstart.trips PURGE;

-- Spark/Iceberg DDL, as a pipeline would write it
CREATE TABLE quickstart.trips (
    trip_id   bigint NOT NULL,
    pickup    timestamp,
    zone      string,
    fare      decimal(10, 2)
) USING iceberg
PARTITIONED BY (days(pickup), bucket(8, trip_id))
TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read');

INSERT INTO quickstart.trips VALUES
    (1, TIMESTAMP '2024-03-01 08:15:00', 'Midtown', 12.50),
    (2, TIMESTAMP '2024-03-01 09:40:00', 'Harlem',  23.00),
    (3, TIMESTAMP '2024-03-02 17:05:00', 'Midtown',  8.75),
    (4, TIMESTAMP '2024-03-02 23:55:00', 'SoHo',    31.20);

SELECT zone, count(*) AS trips, sum(fare) AS fares FROM quickstart.trips GROUP BY zone ORDER BY zone;

-- name this snapshot: a tag (Spark's ALTER TABLE ... CREATE TAG)
ALTER TABLE quickstart.trips CREATE TAG first_load;

-- a row-level delete on this v3 merge-on-read table: a file whose every row matches is dropped,
-- other files get a deletion vector (a Puffin blob); UPDATE is copy-on-write by default
DELETE FROM quickstart.trips WHERE fare < 10;
UPDATE quickstart.trips SET zone = 'Upper Manhattan' WHERE zone = 'Harlem';

SELECT * FROM quickstart.trips ORDER BY trip_id;

-- every commit is a snapshot: read the table as it was at the tag (or at a snapshot id, or a time)
SELECT count(*) AS trips_at_first_load FROM quickstart.trips VERSION AS OF 'first_load';

-- Spark's metadata tables
SELECT snapshot_id, operation, summary['added-records'] AS added FROM quickstart.trips.snapshots ORDER BY committed_at;
SELECT content, file_format, record_count FROM quickstart.trips.files ORDER BY content, file_path;

-- schema evolution without rewriting data
ALTER TABLE quickstart.trips ADD COLUMN tip double DEFAULT 0.0;
SELECT trip_id, zone, tip FROM quickstart.trips ORDER BY trip_id;

-- what planning kept and skipped
EXPLAIN SELECT * FROM quickstart.trips WHERE pickup >= TIMESTAMP '2024-03-02 00:00:00';
