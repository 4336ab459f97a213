"""The measuring half of ``scripts/default_report.py``: the candidates, the recipes of each
table and the sections that measure them into the figures (a JSON file beside the page);
default_report.py writes the page from those figures."""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

# One BLAS thread, set before numpy loads: with two, every fit is about 20 times slower while
# another process keeps a core busy (OpenBLAS threads wait spinning); the models are the same.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

from lab import recipes as _recipes  # noqa: E402
from lab.judges import (  # noqa: E402
    FUNCTION_WORDS,
    QUICK,
    Candidate,
    Judges,
    Scale,
    as_candidate,
    function_word_gaps,
    held_out,
    long_queries,
    qvrs,
    scores,
    style_examples,
    styles,
)
from lab.recipes import (  # noqa: E402
    DEFAULT,
    DEFAULT_NAME,
    ROOT,
    V2,
    V2_NAME,
    V3,
    V3_NAME,
    V4,
    V4_CONTEXTUAL,
    V4_NAME,
    V4_PLAIN,
    Corpora,
    Recipe,
    RoutedRecipe,
    all_names,
    carried_titles,
    pair_titles,
    routing_accuracy,
    titles_in_context,
    with_names,
    wordfreq_words,
)
from qseg import models  # noqa: E402
from qseg.resources.bundle import Resources  # noqa: E402
from qseg.resources.vectors import WordVectors  # noqa: E402
from qseg.segmentation import Segmentation  # noqa: E402
from qseg.tables import render_table  # noqa: E402

CANDIDATES: list[Candidate | Recipe | str] = [
    "naive",
    "wiki(unseen_titles=true)",
    Candidate(V2_NAME, segmenter=V2_NAME, recipe=V2, key="v2"),
    Candidate(V3_NAME, segmenter=V3_NAME, recipe=V3, key="v3"),
    Candidate(V4_NAME, segmenter=V4_NAME, key="v4"),
    Candidate(f"{V4_NAME}(style=auto)", segmenter=f"{V4_NAME}(style=auto)", key="v4-auto"),
    Candidate(f"{V4_NAME}(style=product)", segmenter=f"{V4_NAME}(style=product)", key="v4-product"),
]
"""The candidate defaults every out-of-domain table judges, one a line: a method spec or
shipped model name (used as it is), a recipe of ``_recipes`` (trained as each table needs), or
a :class:`Candidate` with both (a shipped model and the recipe that trained it)."""

SHIPPED = ROOT / "src" / "qseg" / "models" / "shipped"
QUICK_OUT = ROOT / ".pytest_cache" / "default-model-quick.md"
SECTIONS = (
    "ideas",
    "kinds",
    "held-out",
    "ir",
    "long",
    "function-words",
    "conventions",
    "styles",
    "speed",
)
UNSUPERVISED = ("naive", "wiki(unseen_titles=true)")
PLAIN = "name_statistics=false, word_vectors=false, contextual=false"
ENCODER = "joint (names, name vectors, encoder), web"
V1_ROW = "qseg-default-v1: 63,993 frequent-pair titles, both, domain input"
V2_ROW = f"{V2_NAME}: carried titles, both, domain input"
V2_WEB = "v2, web queries weighted 2:1"
V2_FILL = "v2, wordfreq words where Web1T has none"
V2_WORDFREQ = "v2, wordfreq in place of the Web1T words"
V2_VECTORS = "v2, distilled MiniLM vectors of the two words"
V2_ALL = "v2 with all DBpedia names, packed (v3's titles)"
V3_ROW = f"{V3_NAME}: all names packed, a segment of 5+ words only if a known title"
V3_CONTEXT = "v3, DBpedia names in Webis query contexts (weak supervision)"
V3_WEB = "v3, web queries weighted 2:1"
WEB_ALL = "web queries only, all names packed (v3's titles)"
IDEAS = [
    Recipe("counts only, web queries", f"joint({PLAIN}, titles=false)", ("webis",)),
    Recipe("counts only, both kinds", f"joint({PLAIN}, titles=false)"),
    Recipe("counts and all DBpedia titles, web", f"joint({PLAIN})", ("webis",)),
    Recipe("counts and all DBpedia titles, both", f"joint({PLAIN})"),
    Recipe("counts and all DBpedia titles, both, domain input", f"joint({PLAIN}, domain=true)"),
    Recipe(
        "counts and the carried titles, web",
        f"joint({PLAIN})",
        ("webis",),
        lambda: Resources(titles=carried_titles()),
    ),
    Recipe(V1_ROW, V2.spec, resources=lambda: Resources(titles=pair_titles())),
    Recipe(V2_ROW, V2.spec, resources=V2.resources),
    Recipe(V2_WEB, V2.spec, resources=V2.resources, weights=(2.0, 1.0)),
    Recipe(
        V2_FILL,
        V2.spec,
        resources=lambda: Resources(titles=carried_titles(), words=wordfreq_words(fill=True)),
    ),
    Recipe(
        V2_WORDFREQ,
        V2.spec,
        resources=lambda: Resources(titles=carried_titles(), words=wordfreq_words(fill=False)),
    ),
    Recipe(ENCODER, "joint", ("webis",)),
    # the ideas of issue 40
    Recipe(V2_ALL, V2.spec, resources=V3.resources),
    Recipe(V3_ROW, V3.spec, resources=V3.resources),
    Recipe(V3_CONTEXT, V3.spec, resources=V3.resources, extra=titles_in_context(all_names)),
    Recipe(V3_WEB, V3.spec, resources=V3.resources, weights=(2.0, 1.0)),
    Recipe(
        WEB_ALL,
        f"joint({PLAIN}, n_estimators=150, learning_rate=0.1)",
        ("webis",),
        V3.resources,
    ),
]
"""The ideas table's recipes: the unsupervised methods' rows come first, then these (and the
static vectors' row, with ``--static-vectors``)."""

ALL_NAMES = "one model per kind, all name statistics (16 + 13 bits a key), all vectors"
FEW_NAMES = "one model per kind, names seen 3+ times, vectors of 30,000 words"
KIND_RECIPES: list[RoutedRecipe] = [
    V4_PLAIN,
    with_names(ALL_NAMES, 1, 16, 13, None),
    with_names(FEW_NAMES, 3, 12, 8, 30_000),
    V4,
    V4_CONTEXTUAL,
]
"""The routed recipes of the kinds table, each measured in every style."""
WEB_ONLY = "`joint(contextual=false)`, web queries only (built-in names and vectors)"
PRODUCT_ONLY = "`joint(contextual=false)`, product queries only (built-in names and vectors)"
PRODUCT_PROBE = "`joint` (the contextual probe), product queries only"
KIND_REFERENCES = [
    Recipe(WEB_ONLY, "joint(contextual=false)", ("webis",)),
    Recipe(PRODUCT_ONLY, "joint(contextual=false)", ("queryner",)),
    Recipe(PRODUCT_PROBE, "joint", ("queryner",)),
]
"""What the issue holds the default against: qseg's own recipe trained on one kind alone."""


def static_vectors_recipe(path: Path) -> Recipe:
    """v2's recipe with the static MiniLM vectors of the gap's two words as inputs."""
    vectors = WordVectors.from_bytes(path.read_bytes())
    return Recipe(
        V2_VECTORS,
        V2.spec.replace("word_vectors=false", "word_vectors=true"),
        resources=lambda: Resources(titles=carried_titles(), vectors=vectors),
    )


# -- measuring ------------------------------------------------------------------------------


def ideas(judges: Judges, args: argparse.Namespace) -> dict[str, Any]:
    """The rows of the ideas table (the unsupervised methods, then each recipe) and the ideas
    left out (``--quick``: the encoder's; any whose package is not installed), with why."""
    recipes = IDEAS + ([static_vectors_recipe(args.static_vectors)] if args.static_vectors else [])
    skipped: list[list[str]] = []
    if not judges.scale.full:
        skipped.append([ENCODER, "left out by --quick (many minutes even on a quarter)"])
        recipes = [r for r in recipes if r.name != ENCODER]
    rows: list[list[Any]] = []
    for spec in UNSUPERVISED:
        run = judges.in_domain(as_candidate(spec))
        figures = _scores(judges, run.webis, run.queryner)
        rows.append([f"`{spec}` (unsupervised, built-in resources)", *figures])
        print(rows[-1], flush=True)
    for recipe in recipes:
        started = time.perf_counter()
        try:
            rows.append([recipe.name, *judges.recipe_scores(recipe)])
        except ModuleNotFoundError as exc:
            skipped.append([recipe.name, f"not measured: {exc} (pip install {exc.name})"])
            print(f"SKIPPED {recipe.name}: {exc}", flush=True)
            continue
        print(rows[-1], f"{time.perf_counter() - started:.0f} s", flush=True)
    return {"rows": rows, "ideas_skipped": skipped}


def kinds(judges: Judges) -> dict[str, Any]:
    """The kinds table: each routed recipe in every style (cross-validation folds' models
    styled, :func:`_judges.styles`) with its file's size, the single-kind references, and the
    router's accuracy by cross-validation (``--quick``: without the encoder's recipes)."""
    rows, references = [], []
    for recipe in KIND_RECIPES:
        if not judges.scale.full and recipe is V4_CONTEXTUAL:
            continue
        started = time.perf_counter()
        found = styles(judges, recipe)
        full = judges.fold_models(recipe)[1]
        with tempfile.TemporaryDirectory(prefix="qseg-kinds-") as folder:
            path = Path(folder) / "model.qseg"
            names = full.models["web"].inputs.name_statistics
            models.save(full, path, carry_titles=True, carry_names=names)
            size = path.stat().st_size
        for row in found:
            rows.append({"name": recipe.name, **row, "bytes": size})
        _log(f"kinds: {recipe.name} {found} {size:,} bytes {time.perf_counter() - started:.0f} s")
    for recipe in KIND_REFERENCES:
        if not judges.scale.full and recipe.spec == "joint":
            continue
        references.append({"name": recipe.name, "figures": judges.recipe_scores(recipe)})
        _log(f"kinds: {references[-1]}")
    found = {"rows": rows, "references": references, "routing": routing_accuracy(judges.corpora)}
    if judges.scale.full:  # the probe distilled into word tables (the encoder, minutes)
        import distil_probe

        distiller = distil_probe.Distiller(judges.corpora, distil_probe.SMOOTH)
        found["distilled"] = {
            "web": distil_probe.web(judges.corpora, distiller),
            "product": distil_probe.product(judges.corpora, distiller),
        }
        _log(f"kinds: distilled {found['distilled']}")
    return found


def _scores(judges: Judges, webis: Any, queryner: Any) -> list[float | None]:
    return scores(webis, judges.corpora.webis_votes) + scores(queryner, judges.dev_gold)


def conventions(judges: Judges) -> str:
    """How the two corpora segment, and how a model of one segments the other: a table (the
    models are v3's recipe without the domain input, trained on one corpus, and v3's recipe
    on both, as the held-out judges train them)."""
    corpora = judges.corpora
    web = judges.references
    default = Candidate(V3_NAME, recipe=V3)  # one model of both kinds: the domain input
    outside, inside = judges.left_out(default), judges.in_domain(default)
    assert outside.queryner is not None and outside.webis is not None
    assert inside.queryner is not None
    dev = corpora.queryner_dev
    rows = [
        _convention_row("Webis-QSeC-10 training, majority", web.values()),
        _convention_row("QueryNER train", corpora.queryner_train.values()),
        _convention_row("QueryNER dev", dev.values()),
        _convention_row("web model on QueryNER dev", _in(outside.queryner, dev), dev.values()),
        _convention_row("product model on Webis", _in(outside.webis, web), web.values()),
        _convention_row(
            f"the default of both kinds ({V3_NAME}) on QueryNER dev",
            _in(inside.queryner, dev),
            dev.values(),
        ),
    ]
    return render_table(
        [
            "segmentations",
            "break rate",
            "break rate next to a function word",
            "one-word segments",
            "missed breaks",
            "extra breaks",
        ],
        rows,
        markdown=True,
    )


def _in(outputs: dict[str, Segmentation], order: dict[str, Segmentation]) -> list[Segmentation]:
    return [outputs[k] for k in order]


def _convention_row(
    name: str, segs: Iterable[Segmentation], gold: Iterable[Segmentation] | None = None
) -> list[str]:
    gaps = broken = near = near_broken = segments = single = missed = extra = 0
    refs: Iterable[Segmentation | None] = gold if gold is not None else itertools.repeat(None)
    for seg, ref in zip(segs, refs):  # noqa: B905 (repeat() is endless)
        for i, brk in enumerate(seg.breaks):
            gaps += 1
            broken += brk
            if seg.words[i] in FUNCTION_WORDS or seg.words[i + 1] in FUNCTION_WORDS:
                near += 1
                near_broken += brk
            if ref is not None:
                missed += ref.breaks[i] and not brk
                extra += brk and not ref.breaks[i]
        segments += len(seg.segments)
        single += sum(len(s) == 1 for s in seg.segments)
    errors = (
        [three_places(missed / gaps), three_places(extra / gaps)] if gold is not None else ["", ""]
    )
    return [
        name,
        three_places(broken / gaps),
        three_places(near_broken / near),
        three_places(single / segments),
        *errors,
    ]


def speed_table(shared: Path, quick: bool = False) -> str:
    """The table of ``benchmarks/default_model.py`` (run in a process of its own; ``quick``:
    without the encoder model)."""
    command = [sys.executable, str(ROOT / "benchmarks" / "default_model.py")]
    done = subprocess.run(
        [*command, "--shared", str(shared), *(["--no-joint"] if quick else [])],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"benchmarks/default_model.py failed:\n{done.stderr[-3000:]}")
    return done.stdout.strip()


FIRST_USE = "import qseg; qseg.segment('a b')"
FIRST_USE_SHOWN = f'QSEG_CACHE=$(mktemp -d) python -c "{FIRST_USE}"'


def first_use() -> dict[str, Any]:
    """Seconds of ``python -c FIRST_USE`` (the default model's first query) in a new process
    on an empty cache (the counts built, the carried titles unpacked into it), then again on
    the cache it made; with the files it made and their bytes."""
    with tempfile.TemporaryDirectory(prefix="qseg-first-use-") as cache:
        env = os.environ | {"QSEG_CACHE": cache}
        seconds = []
        for _ in range(2):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", FIRST_USE], env=env, check=True)
            seconds.append(time.perf_counter() - started)
        files = sorted(
            [p.relative_to(cache).as_posix(), p.stat().st_size]
            for p in Path(cache).rglob("*")
            if p.is_file()
        )
    return {"command": FIRST_USE_SHOWN, "empty": seconds[0], "made": seconds[1], "files": files}


def styles_figures(judges: Judges) -> dict[str, Any]:
    """The default's recipe in each style (Webis cross-validation, QueryNER dev) and the
    shipped default's answers in each style to queries whose styles differ."""
    return {
        "recipe": DEFAULT.name,
        "spec": DEFAULT.spec,
        "rows": styles(judges, DEFAULT),
        "examples": style_examples(judges, DEFAULT_NAME),
        "shipped": DEFAULT_NAME,
    }


def prime_carried_titles() -> None:
    """For ``--quick``: the carried titles read from ``qseg-default-v2``'s file (the same
    names and fingerprint as ``_recipes.carried_titles``, in 5 s instead of 50 s)."""
    from qseg.models.catalog import shipped_model
    from qseg.models.format import carried_member, read_model
    from qseg.resources.titles import TitleSet

    path = shipped_model(V2_NAME)
    if path is None:
        return
    file = read_model(path)
    entry = file.resources.get("titles")
    if not entry or not entry.get("carried") or entry.get("form", "list") != "list":
        return
    names = file.read_member(carried_member("titles", entry)).decode().splitlines()
    titles = TitleSet(names)
    if titles.fingerprint == entry["fingerprint"]:
        _recipes._TITLES.setdefault("words", titles)


def measure(
    args: argparse.Namespace,
    sections: Sequence[str],
    figures: dict[str, Any],
    command: str,
    save: Callable[[], None],
) -> None:
    """Measure ``sections`` into ``figures``, each with the command and the seconds it took,
    calling ``save`` after each."""
    scale = QUICK if args.quick else Scale()
    if args.quick:
        prime_carried_titles()
    candidates = [as_candidate(c) for c in CANDIDATES]
    steps: dict[str, Callable[[Judges], dict[str, Any]]] = {
        "ideas": lambda j: ideas(j, args),
        "kinds": lambda j: {"kinds": kinds(j)},
        "held-out": lambda j: {"held_out": held_out(j, candidates)},
        "ir": lambda j: {"ir": qvrs(j, candidates)},
        "long": lambda j: {"long": long_queries(j, candidates)},
        "function-words": lambda j: {"function_words": function_word_gaps(j, candidates)},
        "conventions": lambda j: {"conventions": conventions(j)},
        "styles": lambda j: {"styles": styles_figures(j)},
        "speed": lambda j: {
            "speed": speed_table(args.shared, quick=args.quick),
            "first_use": first_use(),
        },
    }
    keep = [DEFAULT] if "styles" in sections else []
    corpora = Corpora.read(args.shared)
    with Judges(corpora, args.shared, scale, log=_log, keep_folds=keep) as judges:
        for section in sections:
            print(f"== {section}", flush=True)
            started = time.perf_counter()
            figures.update(steps[section](judges))
            seconds = time.perf_counter() - started
            figures.setdefault("made", {})[section] = {
                "command": command,
                "scale": scale.describe(),
                "quick": args.quick,
                "seconds": round(seconds, 1),
                "candidates": [c.name for c in candidates],
            }
            save()
            print(f"== {section}: {seconds:.0f} s", flush=True)


def three_places(value: float) -> str:
    return f"{value:.3f}"


def _log(line: str) -> None:
    print(line, flush=True)


# -- rendering ------------------------------------------------------------------------------
