-- The places of a place-sequence dataset, by binary COPY (anonymizers/loading/binary_copy.py,
-- binary_copy_places: the same float8 bytes as its visits' fixes, so that they join exactly)
-- inside the transaction that publishes the dataset (store.py, _publish), after its
-- raw.datasets row: the foreign key holds, and a failure leaves nothing.
COPY raw.places (dataset_id, lon, lat, place) FROM STDIN (FORMAT binary)
