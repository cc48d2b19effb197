-- What only progressive generalization needs (the segments are the size of the window's
-- fixes): dropped once the cells are final. A re-run of the step rebuilds
-- them with a full membership. Identifiers: work.
DROP TABLE IF EXISTS {work}.segments, {work}.recross, {work}.recross_full, {work}.moved_ends,
    {work}.candidates, {work}.relocated, {work}.moved_points, {work}.regions,
    {work}.removed_cells, {work}.affected_cells, {work}.uncrossed, {work}.membership_lattice,
    {work}.changed_trajectories, {work}.trajectory_numbers
    CASCADE;
