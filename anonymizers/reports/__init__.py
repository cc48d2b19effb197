"""Release reports: a static HTML page with PNG figures, readable offline."""
