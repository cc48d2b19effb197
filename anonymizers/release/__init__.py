"""Release machinery: what a release is, the work/build schemas, and the atomic publish."""
