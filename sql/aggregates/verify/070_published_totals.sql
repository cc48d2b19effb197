-- Aggregates verifier: the published window total(s) (one row at most in a valid release).
-- Identifiers: totals (the totals table).
SELECT bins, n_lo, n_hi FROM {totals};
