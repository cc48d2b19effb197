-- Crossings of the segments in {work}.recross (all segments after a full membership,
-- the affected ones after an update): every cell a segment runs through, other than
-- its ends' cells, entered at the interpolated time. Identifiers: work.
SET LOCAL work_mem = '256MB';
CREATE INDEX ON {work}.recross USING gist (line);
ANALYZE {work}.recross;
INSERT INTO {work}.crossings (traj_id, user_id, t1, t2, t, cell_id)
SELECT s.traj_id, s.user_id, s.t1, s.t2,
       s.t1 + (s.t2 - s.t1) * ST_LineLocatePoint(s.line,
                                                 ST_ClosestPoint(x.inside, ST_StartPoint(s.line))),
       c.cell_id
FROM {work}.cells AS c
JOIN {work}.recross AS s
  ON ST_Intersects(c.geom, s.line) AND c.cell_id <> s.c1 AND c.cell_id <> s.c2
CROSS JOIN LATERAL (SELECT ST_Intersection(c.geom, s.line) AS inside) AS x
WHERE ST_Length(x.inside) > 0;
DROP TABLE {work}.recross;
