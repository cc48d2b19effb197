-- Progressive generalization starts its log afresh (a re-run first restores the
-- clustering's generators, 107_restore_generators.sql). Identifiers: work.
TRUNCATE {work}.progressive_log
