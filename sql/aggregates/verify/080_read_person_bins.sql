-- Aggregates verifier: each person's dominant zone per whole bin as derived (020), for the
-- attack suite's targets (the analyst never sees it).
SELECT user_id, bin, zone_key FROM agv_person_bins ORDER BY user_id, bin;
