-- The characteristic points of the window, filled by Python with COPY (a re-run of the
-- step starts afresh). `person` numbers the window's persons in the order the step met
-- them (trajectory order): the clustering needs only to tell persons apart, and reading
-- 15 million integers back costs far less than coding as many id strings again (25M
-- fixes: 9 s of the cluster step). Identifiers: work.
DROP TABLE IF EXISTS {work}.characteristic_points;
CREATE TABLE {work}.characteristic_points (
    person  integer NOT NULL,
    x       double precision,
    y       double precision
);
