"""The learned models: the break classifier and its parameters (:mod:`.supervised`,
:mod:`.trainable`), the model it makes (:mod:`.break_model`, :mod:`.routing` for a model per
kind of query), its inputs (gap and name features, lexicon, domain, contextual probes), its
trees and joint decoding, adaptation to annotations, and the compiled kernels that mirror
them (``_gap_kernel``, ``_joint_kernel``, ``_trees``; :mod:`.compiled` builds them)."""
