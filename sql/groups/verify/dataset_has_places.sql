-- Verifier of trajectory groups (seed 004): whether the dataset was loaded with places
-- (places = 'auto' then means the dataset's places, else the grid). Params: dataset_id.
SELECT EXISTS (SELECT 1 FROM raw.places WHERE dataset_id = %(dataset_id)s) AS has_places;
