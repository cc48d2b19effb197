-- Aggregates verifier: every published cell of presence_counts and od_counts (table: which)
-- with its bin as a number (NULL unless bin_start is a whole number of bins from the window
-- start and bin_end one bin later), its interval and its published zone ids.
-- Params: window_start, bin_seconds. Identifiers: presence, od (the two tables).
WITH published AS (
    SELECT 'presence_counts' AS source, NULL::integer AS origin_zone_id, zone_id,
           bin_start, bin_end, n_lo, n_hi
    FROM {presence}
    UNION ALL
    SELECT 'od_counts', origin_zone_id, destination_zone_id, bin_start, bin_end, n_lo, n_hi
    FROM {od}
)
SELECT source, origin_zone_id, zone_id, n_lo, n_hi,
       CASE WHEN mod(s.offset_s, %(bin_seconds)s::numeric) = 0
             AND extract(epoch FROM bin_end - bin_start)::numeric = %(bin_seconds)s
            THEN (s.offset_s / %(bin_seconds)s)::bigint END AS bin
FROM published
CROSS JOIN LATERAL (SELECT extract(epoch FROM bin_start - %(window_start)s::timestamptz)::numeric
                           AS offset_s) AS s;
