-- The support of every published group of an aligned (MLA) clustering release, re-derived
-- from raw fixes (clustering/verify/sequence_fixes.sql, run first): the distinct persons
-- with one trajectory whose fixes, in time order, lie in the group's regions in seq order.
-- A fix lies in a region when it is inside the closed rectangle (as the polygon covers
-- it) and t_start <= t < t_end; each region must be matched by a fix strictly later than
-- the fix that matched the region before. The chain takes, region after region, the earliest such
-- fix: the leftmost match finds a chain whenever one exists (as for any subsequence), and
-- the trajectories that drop out early are never read again.
-- Returns group_id, its published n_persons and the re-derived support.
-- Identifiers: release (the schema under test).
DROP TABLE IF EXISTS pg_temp.ml_verify_regions;
CREATE TEMP TABLE ml_verify_regions ON COMMIT DROP AS
SELECT group_id,
       (row_number() OVER (PARTITION BY group_id ORDER BY seq) - 1)::integer AS step,
       t_start, t_end, geom, ST_XMin(geom) AS x0, ST_YMin(geom) AS y0,
       ST_XMax(geom) AS x1, ST_YMax(geom) AS y1
FROM {release}.group_regions;
CREATE INDEX ON ml_verify_regions (group_id, step);
ANALYZE ml_verify_regions;

-- The persons of each group (ml_verify_members: the attack suite reads it too), then the
-- support. The index's boxes are rounded outward (float4): the exact float8 comparison
-- decides.
DROP TABLE IF EXISTS pg_temp.ml_verify_members;
CREATE TEMP TABLE ml_verify_members ON COMMIT DROP AS
WITH RECURSIVE chain AS (
    SELECT r.group_id, f.traj, min(f.person) AS person, 0 AS step, min(f.t) AS t
    FROM ml_verify_regions AS r
    -- By time first: a first region covers half the city for one time bin, so its
    -- interval holds far fewer fixes than its rectangle (36,000 a group, a third of them
    -- at other times, on a T-Drive morning through the spatial index).
    JOIN ml_verify_fixes AS f ON f.t >= r.t_start AND f.t < r.t_end
    WHERE r.step = 0 AND f.x BETWEEN r.x0 AND r.x1 AND f.y BETWEEN r.y0 AND r.y1
    GROUP BY r.group_id, f.traj
    UNION ALL
    SELECT c.group_id, c.traj, c.person, c.step + 1, n.t
    FROM chain AS c
    JOIN ml_verify_regions AS r ON r.group_id = c.group_id AND r.step = c.step + 1
    CROSS JOIN LATERAL (
        SELECT f.t FROM ml_verify_fixes AS f
        WHERE f.traj = c.traj AND f.t > c.t AND f.t >= r.t_start AND f.t < r.t_end
          AND f.x BETWEEN r.x0 AND r.x1 AND f.y BETWEEN r.y0 AND r.y1
        ORDER BY f.t
        LIMIT 1
    ) AS n
),
last_step AS (SELECT group_id, max(step) AS step FROM ml_verify_regions GROUP BY group_id)
SELECT DISTINCT c.group_id, c.person
FROM chain AS c JOIN last_step AS l USING (group_id, step);
ANALYZE ml_verify_members;

SELECT g.group_id, g.n_persons, coalesce(s.persons, 0) AS support
FROM {release}.groups AS g
LEFT JOIN (SELECT group_id, count(*) AS persons FROM ml_verify_members GROUP BY group_id) AS s
  USING (group_id)
ORDER BY g.group_id
