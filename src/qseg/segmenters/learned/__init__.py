"""The learned models: the break classifier and its parameters (:mod:`.supervised`,
:mod:`.trainable`), the model it makes (:mod:`.break_model`, :mod:`.routing` for a model per
kind of query), its inputs (gap and name features, lexicon, domain, contextual probes), its
trees and joint decoding, adaptation to annotations, and the compiled kernels that mirror
them (``_joint_kernel`` and its parts, each a Cython module with a ``.pxd``: ``_gap_kernel``,
``_gap_probabilities``, ``_decoding``, ``_trees``, ``_key_table``, ``_domain_kernel``,
``_sums``, ``_sizes``; :mod:`.compiled` builds the kernel of a model)."""
