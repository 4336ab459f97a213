"""The rule-based methods: naive (Hagen et al.), Wikipedia-normalized, PMI, the query-log
method, and the baselines (gensim's phrases, always and never split). Each scores
segmentations from counts and titles and decodes them exactly (:mod:`..decoder`)."""
