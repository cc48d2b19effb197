-- After derive_sequences.sql: parallel plans again, as the server's settings say
-- (fixes_scan_serial.sql turned them off for the COPY of the window's fixes).
RESET max_parallel_workers_per_gather;
