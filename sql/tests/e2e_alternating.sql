-- Spark and iceduck write the same table in turns (issue 4: "Spark can write to a table after
-- iceduck wrote it, and the reverse, alternating"): every commit builds on the other engine's.
-- Parameters: $ns, $fv, $mode, $writer.

-- step: iceduck
CREATE NAMESPACE $ns

-- step: iceduck
-- table: $ns.t
CREATE TABLE $ns.t (id bigint, s string, cat string, v double) USING iceberg
PARTITIONED BY (cat, bucket(8, id))
TBLPROPERTIES ('format-version'='$fv', 'write.delete.mode'='$mode', 'write.update.mode'='$mode',
               'write.merge.mode'='$mode')

-- step: iceduck
INSERT INTO $ns.t VALUES (1, 'i1', 'a', 1.0), (2, 'i2', 'a', 2.0), (3, 'i3', 'b', 3.0), (4, 'i4', 'c', NULL)

-- step: spark
INSERT INTO $ns.t VALUES (5, 's5', 'a', 5.0), (6, 's6', 'b', -0.0), (7, 's7', NULL, 7.5)

-- step: iceduck
DELETE FROM $ns.t WHERE id = 2

-- step: spark
MERGE INTO $ns.t AS t
USING (SELECT * FROM (VALUES (1, 'spark-merged'), (8, 'spark-new')) AS v(id, s)) AS src
ON t.id = src.id
WHEN MATCHED THEN UPDATE SET s = src.s
WHEN NOT MATCHED THEN INSERT (id, s, cat, v) VALUES (src.id, src.s, 'd', 8.0)

-- step: iceduck
UPDATE $ns.t SET v = v * 10 WHERE cat = 'a'

-- step: spark
DELETE FROM $ns.t WHERE id = 5

-- step: iceduck peers
MERGE INTO $ns.t AS t
USING (SELECT * FROM (VALUES (3, 'd'), (6, 'u'), (9, 'i')) AS v(id, op)) AS src
ON t.id = src.id
WHEN MATCHED AND src.op = 'd' THEN DELETE
WHEN MATCHED THEN UPDATE SET s = 'iceduck-merged'
WHEN NOT MATCHED THEN INSERT (id, s, cat, v) VALUES (src.id, 'iceduck-new', 'b', 9.0)

-- step: spark
UPDATE $ns.t SET cat = 'moved' WHERE id = 7

-- step: iceduck
INSERT INTO $ns.t SELECT id + 100, concat(s, '-copy'), cat, v FROM $ns.t WHERE cat IN ('a', 'b')

-- step: spark
DELETE FROM $ns.t WHERE cat = 'c'

-- step: iceduck
DELETE FROM $ns.t WHERE id = 101 OR s = 'spark-new'

-- step: spark
ALTER TABLE $ns.t ADD COLUMN w string

-- step: iceduck
INSERT INTO $ns.t VALUES (10, 'after add', 'e', 10.0, 'w10')

-- step: spark
UPDATE $ns.t SET w = concat('w', s) WHERE w IS NULL AND id < 100

-- step: iceduck peers
MERGE INTO $ns.t AS t
USING (SELECT * FROM (VALUES (10, 'w-merged'), (11, 'w11')) AS v(id, w)) AS src
ON t.id = src.id
WHEN MATCHED THEN UPDATE SET w = src.w
WHEN NOT MATCHED THEN INSERT (id, s, cat, v, w) VALUES (src.id, 'last', 'e', 11.0, src.w)
WHEN NOT MATCHED BY SOURCE AND t.cat = 'moved' THEN DELETE

-- step: spark
INSERT INTO $ns.t VALUES (12, 'spark last', 'e', 12.0, 'w12')
