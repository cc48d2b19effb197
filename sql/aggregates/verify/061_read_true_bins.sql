-- Aggregates verifier: every whole bin's true total as derived (020).
SELECT bin, n FROM agv_bins ORDER BY bin;
