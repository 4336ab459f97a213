"""The segmenting API: ``POST /segment`` and ``GET /methods`` over the segmenters served."""
