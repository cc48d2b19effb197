-- Aggregates: the suppression step's result, empty (the step COPYs into them): the cells
-- and bins published, and the window total (its true count, and whether it is published).
-- Identifiers: work.
DROP TABLE IF EXISTS {work}.ag_published_cells, {work}.ag_published_bins, {work}.ag_window;
CREATE TABLE {work}.ag_published_cells (cell_index integer PRIMARY KEY);
CREATE TABLE {work}.ag_published_bins (bin integer PRIMARY KEY);
CREATE TABLE {work}.ag_window (n bigint NOT NULL, published boolean NOT NULL);
