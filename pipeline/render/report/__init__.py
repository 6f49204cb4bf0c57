"""HTML: the review report, its sections, the batch index, the notebook views."""
