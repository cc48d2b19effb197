-- Before derive_sequences.sql: no parallel workers for the window's fixes. The verifier
-- derives them on forked workers of its own while they stream in, so the server's
-- workers would only take its cores; and without them the planner reads the fixes in
-- (traj_id, t) order from the points' index when the table lies in that order (as loaded
-- files of whole trajectories do), instead of a parallel sort of the whole window (25M
-- fixes: the index plan 28.0 s under EXPLAIN ANALYZE; the COPY with the parallel sort
-- 53.1 s, auto_explain, the derivation consuming beside it). A table in another order
-- still gets a sort. Run on the reading connection before the query (arrow_reads.py).
SET max_parallel_workers_per_gather = 0;
