-- The distinct published sequences of the anonymize step, one row each (pattern number,
-- cells), written by COPY from Python into the temporary table of 075_anonymized.sql.
-- Params: none (the rows come through COPY). Identifiers: none.
COPY pg_temp.published_patterns (pattern_no, cells) FROM STDIN
