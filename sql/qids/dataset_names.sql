-- The names of the loaded datasets (for the message when a name is unknown).
-- Params: none.
SELECT name FROM raw.datasets ORDER BY name;
