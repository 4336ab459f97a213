"""The lab bench the report scripts and tests share: the recipes of the shipped models
(:mod:`lab.recipes`), the judges of an idea against its base (:mod:`lab.judges`) and the
default model's measurements (:mod:`lab.default_measures`). Importable as ``lab`` from
``scripts/`` (a script run there has it on its path; pytest adds it: ``pythonpath`` in
pyproject.toml)."""
