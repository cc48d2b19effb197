-- Aggregates verifier: every published bin total with its bin as a number (NULL unless
-- bin_start is a whole number of bins from the window start and bin_end one bin later).
-- Params: window_start, bin_seconds. Identifiers: bins (the bin_totals table).
SELECT counted, n_lo, n_hi,
       CASE WHEN mod(s.offset_s, %(bin_seconds)s::numeric) = 0
             AND extract(epoch FROM bin_end - bin_start)::numeric = %(bin_seconds)s
            THEN (s.offset_s / %(bin_seconds)s)::bigint END AS bin
FROM {bins}
CROSS JOIN LATERAL (SELECT extract(epoch FROM bin_start - %(window_start)s::timestamptz)::numeric
                           AS offset_s) AS s;
