-- Trajectory groups (seed 004): one attribute's hidden bounds (§4.4.5) on the published
-- demographic classes: the column pair {lo} / {hi} (the attribute's <name>_lo, <name>_hi)
-- holding the class's hidden lower (inclusive) and upper (exclusive) bound, the
-- attribute's entry of tg_classes' hidden_lower / hidden_upper arrays.
-- Params: position (the attribute's, from 1), lo_comment, hi_comment.
-- Identifiers: work, build, lo, hi.
ALTER TABLE {build}.demographic_classes ADD COLUMN {lo} double precision,
                                        ADD COLUMN {hi} double precision;
COMMENT ON COLUMN {build}.demographic_classes.{lo} IS %(lo_comment)s;
COMMENT ON COLUMN {build}.demographic_classes.{hi} IS %(hi_comment)s;
UPDATE {build}.demographic_classes AS b
SET {lo} = c.hidden_lower[%(position)s], {hi} = c.hidden_upper[%(position)s]
FROM {work}.tg_class_ids AS d
JOIN {work}.tg_classes AS c USING (group_index, class_index)
WHERE d.group_id = b.group_id AND d.class_id = b.class_id;
ALTER TABLE {build}.demographic_classes ALTER COLUMN {lo} SET NOT NULL,
                                        ALTER COLUMN {hi} SET NOT NULL;
