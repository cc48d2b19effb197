"""Release reports (issue 11): a static HTML page with PNG figures, readable offline."""
