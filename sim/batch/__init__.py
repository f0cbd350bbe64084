"""Episode batches: manifests, their ``sim.episode`` jobs, results tables, failure attribution.

Importing this package registers the ``sim.episode`` job kind, so a worker hosting it (see
``app/cli/_jobs_cmds.py``) runs batch episodes next to the judge's jobs; it is a remote kind,
so ``workbench worker --ray`` runs them on a Ray cluster (:func:`prepare_episode`,
:func:`run_episode_task`).
"""

from sim.batch._attribution import GUIDANCE_WINDOW, propose_attribution, store_attribution
from sim.batch._jobs import (
    AFTER_STORE,
    EPISODE_KIND,
    episode_job_error,
    prepare_episode,
    queue_batch,
    run_episode_task,
)
from sim.batch._manifest import (
    AGENT_KINDS,
    FORMAT,
    NO_USER,
    AgentMaker,
    Manifest,
    ManifestError,
    Participant,
    load_manifest,
    parse_manifest,
    plan_cells,
)
from sim.batch._results import (
    AXES,
    ITEMS,
    METRICS,
    ResultsError,
    ResultsTable,
    Row,
    drill_down,
    format_summary,
    results_table,
    stored_items,
)

__all__ = [
    "AFTER_STORE",
    "AGENT_KINDS",
    "AXES",
    "EPISODE_KIND",
    "FORMAT",
    "GUIDANCE_WINDOW",
    "ITEMS",
    "METRICS",
    "NO_USER",
    "AgentMaker",
    "Manifest",
    "ManifestError",
    "Participant",
    "ResultsError",
    "ResultsTable",
    "Row",
    "drill_down",
    "episode_job_error",
    "format_summary",
    "load_manifest",
    "parse_manifest",
    "plan_cells",
    "prepare_episode",
    "propose_attribution",
    "queue_batch",
    "results_table",
    "run_episode_task",
    "store_attribution",
    "stored_items",
]
