-- Remove a dataset's QIDs before the new ones are copied in (same transaction: readers see
-- the old set or the new one, never a mix). Returns how many there were.
-- Params: dataset_id.
WITH removed AS (
    DELETE FROM raw.qids WHERE dataset_id = %(dataset_id)s RETURNING 1
)
SELECT count(*) AS removed FROM removed;
