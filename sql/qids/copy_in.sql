-- Bulk load of QIDs (CSV rows dataset_id,user_id,t; t with its UTC offset).
-- Params: none (the rows come through COPY).
COPY raw.qids (dataset_id, user_id, t) FROM STDIN (FORMAT csv)
