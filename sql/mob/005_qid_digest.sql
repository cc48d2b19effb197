-- A digest of a dataset's quasi-identifiers (raw.qids), for the release's identity and its
-- manifest (the gate keys it with the installation secret: a plain hash of a QID set would
-- confirm a guessed one). Params: dataset_id. Column: digest.
SELECT md5(coalesce(string_agg(user_id || '@' || to_char(t AT TIME ZONE 'UTC',
                                                          'YYYY-MM-DD"T"HH24:MI:SS.US'),
                               ',' ORDER BY user_id, t), '')) AS digest
FROM raw.qids
WHERE dataset_id = %(dataset_id)s;
