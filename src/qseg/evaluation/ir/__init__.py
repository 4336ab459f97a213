"""IR-based evaluation of segmenters (paper 000): quoted versions on a real search engine."""
