-- anonymizers compare: index the footprint of the release being measured (the temporary
-- table compare_footprint, made from the family's Family.footprint query).
CREATE INDEX ON compare_footprint USING gist (geom);
ANALYZE compare_footprint;
