"""The trainable methods of the registry as estimators ready to train: what ``qseg train`` fits."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from qseg.errors import QsegError
from qseg.fileio import StrPath
from qseg.resources.bundle import Resources
from qseg.segmenters.registry import METHODS, Method, create, parse_spec

if TYPE_CHECKING:
    from qseg.segmenters.learned.supervised import BreakClassifier


def trainable_method(spec: str) -> tuple[Method, dict[str, Any]]:
    """The trainable method ``spec`` names and its parameters; an error for any other."""
    method, params = parse_spec(spec)
    if not method.trains:
        trainable = ", ".join(name for name, m in METHODS.items() if m.trains)
        raise QsegError(
            f"method {method.name!r} is not trained: `qseg segment --method {spec}` uses it as "
            f"it is; trainable: {trainable}"
        )
    return method, params


def estimator(
    spec: str,
    resources: Resources | None = None,
    *,
    corpus: StrPath | None = None,
    dimensions: int = 50,
    random_state: int | None = None,
    jobs: int = 1,
) -> BreakClassifier:
    """The untrained estimator of the trainable method ``spec``, ready to ``fit``.

    ``corpus``: train ``dimensions``-dimensional word vectors on it (gensim) to use instead of
    the built-in name vectors (``embeddings`` needs them). ``random_state`` sets the spec's
    ``random_state`` (giving two different ones is an error); ``jobs`` is XGBoost's threads.
    """
    from qseg.resources.word2vec import train_word_vectors

    method, params = trainable_method(spec)
    default = method.params["random_state"].default
    if random_state is not None and params["random_state"] not in (default, random_state):
        raise QsegError(
            f"two seeds: random_state={params['random_state']} in {spec!r} and "
            f"{random_state}; give one"
        )
    if random_state is None:
        random_state = params["random_state"]
    resources = resources or Resources()
    if corpus is not None:
        vectors = train_word_vectors(corpus, dimensions=dimensions, seed=random_state)
        resources = replace(resources, vectors=vectors)
    model = cast("BreakClassifier", create(spec, resources))
    return model.set_params(random_state=random_state, n_jobs=jobs)
