-- Aggregates: the true count of every whole bin (persons, or moves), for the suppression
-- step. Identifiers: work.
SELECT bin, n FROM {work}.ag_bins ORDER BY bin;
