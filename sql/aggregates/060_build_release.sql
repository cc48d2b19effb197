-- Aggregates: fill the build schema from the work tables and the suppression's choice.
-- Published: the cells, bin totals and window total the suppression step kept (each of at
-- least k persons, with the remainder of every published total 0 or at least k), as the
-- interval filter's inclusive pair (seed 004 §4.2, eq. 1):
--   n_lo = k + I_s * floor((n - k) / I_s), n_hi = n_lo + I_s - 1.
-- A bin is [window_start + bin * bin_seconds, + bin_seconds). Zones: those a published
-- cell names, under fresh ids in random order (ag_zone_ids maps them back, private).
-- Params: k, interval_size, window_start, bin_seconds, counted, bin_counted, n_bins.
-- Identifiers: work, build.
DROP TABLE IF EXISTS {work}.ag_zone_ids;
CREATE TABLE {work}.ag_zone_ids AS
SELECT zone_key, row_number() OVER (ORDER BY random())::integer AS zone_id
FROM (SELECT c.zone_key FROM {work}.ag_cells AS c JOIN {work}.ag_published_cells USING (cell_index)
      UNION
      SELECT c.origin_key FROM {work}.ag_cells AS c JOIN {work}.ag_published_cells USING (cell_index)
      WHERE c.origin_key IS NOT NULL) AS used;
ALTER TABLE {work}.ag_zone_ids ADD PRIMARY KEY (zone_key);

INSERT INTO {build}.zones (zone_id, geom)
SELECT i.zone_id, z.geom
FROM {work}.ag_zone_ids AS i JOIN {work}.ag_zones AS z USING (zone_key)
ORDER BY random();
CREATE INDEX ON {build}.zones USING gist (geom);
INSERT INTO {build}.zone_centroids (zone_id, geom)
SELECT i.zone_id, z.centroid
FROM {work}.ag_zone_ids AS i JOIN {work}.ag_zones AS z USING (zone_key)
WHERE z.centroid IS NOT NULL
ORDER BY random();
CREATE INDEX ON {build}.zone_centroids USING gist (geom);

CREATE TEMP TABLE ag_filtered ON COMMIT DROP AS
SELECT c.cell_index, c.bin, c.origin_key, c.zone_key,
       %(k)s + %(interval_size)s * ((c.n - %(k)s) / %(interval_size)s) AS n_lo,
       %(window_start)s::timestamptz + make_interval(secs => c.bin * %(bin_seconds)s::float8)
           AS bin_start
FROM {work}.ag_cells AS c JOIN {work}.ag_published_cells USING (cell_index);

INSERT INTO {build}.presence_counts (zone_id, bin_start, bin_end, n_lo, n_hi)
SELECT z.zone_id, f.bin_start, f.bin_start + make_interval(secs => %(bin_seconds)s::float8),
       f.n_lo, f.n_lo + %(interval_size)s - 1
FROM ag_filtered AS f JOIN {work}.ag_zone_ids AS z USING (zone_key)
WHERE f.origin_key IS NULL
ORDER BY random();

INSERT INTO {build}.od_counts (origin_zone_id, destination_zone_id, bin_start, bin_end,
                               n_lo, n_hi)
SELECT o.zone_id, z.zone_id, f.bin_start,
       f.bin_start + make_interval(secs => %(bin_seconds)s::float8),
       f.n_lo, f.n_lo + %(interval_size)s - 1
FROM ag_filtered AS f
JOIN {work}.ag_zone_ids AS z USING (zone_key)
JOIN {work}.ag_zone_ids AS o ON o.zone_key = f.origin_key
ORDER BY random();
CREATE INDEX ON {build}.presence_counts (bin_start);
CREATE INDEX ON {build}.od_counts (bin_start);

INSERT INTO {build}.bin_totals (counted, bin_start, bin_end, n_lo, n_hi)
SELECT %(bin_counted)s, s.bin_start, s.bin_start + make_interval(secs => %(bin_seconds)s::float8), f.n_lo,
       f.n_lo + %(interval_size)s - 1
FROM {work}.ag_bins AS b
JOIN {work}.ag_published_bins USING (bin)
CROSS JOIN LATERAL (SELECT %(window_start)s::timestamptz
                           + make_interval(secs => b.bin * %(bin_seconds)s::float8)
                           AS bin_start) AS s
CROSS JOIN LATERAL (SELECT %(k)s + %(interval_size)s * ((b.n - %(k)s) / %(interval_size)s)
                           AS n_lo) AS f
ORDER BY s.bin_start;

INSERT INTO {build}.totals (counted, bins, n_lo, n_hi)
SELECT %(counted)s, %(n_bins)s, f.n_lo, f.n_lo + %(interval_size)s - 1
FROM {work}.ag_window AS w
CROSS JOIN LATERAL (SELECT %(k)s + %(interval_size)s * ((w.n - %(k)s) / %(interval_size)s)
                           AS n_lo) AS f
WHERE w.published;

COMMENT ON TABLE {build}.zones IS
    'The zones the published counts name: squares of a fixed grid of manifest.parameters.cell_size metres anchored at the CRS origin (zones=grid), the dataset''s public places (zones=dataset), or the cells of the published release manifest.parameters.zones_release (zones=voronoi). Only zones a published count names are listed. Ids are fresh in every release. In the release''s metric CRS.';
COMMENT ON COLUMN {build}.zones.fid IS 'Row number (the feature id GIS tools use); join on zone_id.';
COMMENT ON COLUMN {build}.zones.zone_id IS 'The zone''s id in this release (random; another release''s ids differ).';
COMMENT ON COLUMN {build}.zones.geom IS 'The zone: a grid square, a place''s point, or a cell of zones_release.';
COMMENT ON TABLE {build}.zone_centroids IS
    'The point of each zone that has one: the grid square''s centre, or the place''s point; the cells of zones_release have none (no row).';
COMMENT ON COLUMN {build}.zone_centroids.fid IS 'Row number (the feature id GIS tools use); join on zone_id.';
COMMENT ON COLUMN {build}.zone_centroids.zone_id IS 'The zone (zones.zone_id).';
COMMENT ON COLUMN {build}.zone_centroids.geom IS 'The zone''s point, in the release''s metric CRS.';
COMMENT ON COLUMN {build}.presence_counts.fid IS
    'Row number (the feature id GIS tools use); (zone_id, bin_start) is the key of a count.';
COMMENT ON TABLE {build}.presence_counts IS
    'Presence counts (method presence): the persons whose dominant zone in the time bin was the zone (the zone holding most of their fixes in the bin; ties to the zone first in a public order). Each person counts once per bin, so the cells of a bin add up to its bin total. A cell of fewer than k persons is absent, and so are further cells whose absence keeps every published total from revealing fewer than k persons (secondary suppression); an absent cell may be 0 or any suppressed count. No zone totals over bins are published.';
COMMENT ON COLUMN {build}.presence_counts.zone_id IS 'The zone (zones.zone_id).';
COMMENT ON COLUMN {build}.presence_counts.bin_start IS 'Start of the time bin (inclusive): the window start plus a whole number of manifest.parameters.bin_seconds.';
COMMENT ON COLUMN {build}.presence_counts.bin_end IS 'End of the time bin (exclusive).';
COMMENT ON COLUMN {build}.presence_counts.n_lo IS 'Interval filter (seed 004 §4.2): the cell''s persons number between n_lo and n_hi, inclusive; the interval is one of a fixed tiling of size manifest.count_interval starting at k.';
COMMENT ON COLUMN {build}.presence_counts.n_hi IS 'Upper end (inclusive) of the interval holding the cell''s number of persons.';
COMMENT ON COLUMN {build}.od_counts.fid IS
    'Row number (the feature id GIS tools use); (origin_zone_id, destination_zone_id, bin_start) is the key of a count.';
COMMENT ON TABLE {build}.od_counts IS
    'Origin-destination counts (method od): the persons whose dominant zone was the origin in the bin before and the destination in this bin (one move per person observed in both bins, counted in the later one; stayers have origin = destination). The cells of a bin add up to its bin total. Suppressed cells are absent as in presence_counts; no row or column totals are published.';
COMMENT ON COLUMN {build}.od_counts.origin_zone_id IS 'The dominant zone in the previous bin (zones.zone_id).';
COMMENT ON COLUMN {build}.od_counts.destination_zone_id IS 'The dominant zone in this bin (zones.zone_id).';
COMMENT ON COLUMN {build}.od_counts.bin_start IS 'Start of the bin the move ends in (inclusive); the move starts in the bin before.';
COMMENT ON COLUMN {build}.od_counts.bin_end IS 'End of the bin the move ends in (exclusive).';
COMMENT ON COLUMN {build}.od_counts.n_lo IS 'Interval filter of the number of persons making the move (as presence_counts.n_lo).';
COMMENT ON COLUMN {build}.od_counts.n_hi IS 'Upper end (inclusive) of the interval holding the number of persons making the move.';
COMMENT ON COLUMN {build}.bin_totals.fid IS
    'Row number (the feature id GIS tools use); bin_start is the key of a total.';
COMMENT ON TABLE {build}.bin_totals IS
    'Per time bin, the total of its cells: persons observed in the bin (presence), or persons observed in the bin and the one before (od). Absent when below k, or when its absence keeps the window total from revealing fewer than k persons.';
COMMENT ON COLUMN {build}.bin_totals.counted IS 'What the total counts: persons (presence) or moves (od).';
COMMENT ON COLUMN {build}.bin_totals.bin_start IS 'Start of the time bin (inclusive).';
COMMENT ON COLUMN {build}.bin_totals.bin_end IS 'End of the time bin (exclusive).';
COMMENT ON COLUMN {build}.bin_totals.n_lo IS 'Interval filter of the bin''s total (as presence_counts.n_lo).';
COMMENT ON COLUMN {build}.bin_totals.n_hi IS 'Upper end (inclusive) of the interval holding the bin''s total.';
COMMENT ON COLUMN {build}.totals.fid IS
    'Row number (the feature id GIS tools use); the table has one row when the total is published.';
COMMENT ON TABLE {build}.totals IS
    'The window total: the sum of all bin totals (person-bins, or moves) over the whole bins of the window; absent when below k.';
COMMENT ON COLUMN {build}.totals.counted IS 'What the total counts: person-bins (presence) or moves (od).';
COMMENT ON COLUMN {build}.totals.bins IS 'Number of whole time bins in the window.';
COMMENT ON COLUMN {build}.totals.n_lo IS 'Interval filter of the window total (as presence_counts.n_lo).';
COMMENT ON COLUMN {build}.totals.n_hi IS 'Upper end (inclusive) of the interval holding the window total.';
