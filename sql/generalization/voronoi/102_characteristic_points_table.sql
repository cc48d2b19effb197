-- The characteristic points of the window, filled by Python with COPY (a re-run of the
-- step starts afresh). Identifiers: work.
DROP TABLE IF EXISTS {work}.characteristic_points;
CREATE TABLE {work}.characteristic_points (
    user_id text NOT NULL,
    x       double precision,
    y       double precision
);
