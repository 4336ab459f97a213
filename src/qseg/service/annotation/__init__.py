"""The annotation app (``qseg annotate``): its pages, their JSON API and their files."""
