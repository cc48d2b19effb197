-- Aggregates verifier: the true table as derived (020): every cell with at least one person,
-- (the bins: 061_read_true_bins.sql).
SELECT bin, origin_key, zone_key, n FROM agv_cells ORDER BY bin, origin_key, zone_key;
