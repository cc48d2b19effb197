-- A step of progressive generalization removes the generators of merged, dropped and
-- coinciding cells, and those about to be written again under the same id (the merged
-- ones, which keep one of their two ids), before the new generators are copied in.
-- Params: gen_ids (integer[]). Identifiers: work.
DELETE FROM {work}.generators WHERE gen_id = ANY(%(gen_ids)s::integer[])
