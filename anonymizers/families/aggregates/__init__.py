"""k-anonymous aggregates: presence counts per zone and time bin, origin-destination matrices."""
