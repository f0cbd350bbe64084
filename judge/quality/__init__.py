"""The interaction-quality judge (IVG spec §4.3): two judges grade every round of an interactive
episode on the 10-item rubric of ``sim.metrics``, as the ``judge.quality`` job; scores are
aggregated from the stored verdicts alone.

Importing it adds the ``quality`` items to ``sim.batch``'s results columns.
"""

from judge.quality._items import quality_items
from judge.quality._job import QUALITY_KIND, run_judge_quality
from judge.quality._prompt import PROMPT_VERSION
from judge.quality._rounds import QualityRound, QualityRoundsError, episode_rounds
from judge.quality._scores import QualityScores, quality_scores, queue_quality, stored_verdicts

__all__ = [
    "PROMPT_VERSION",
    "QUALITY_KIND",
    "QualityRound",
    "QualityRoundsError",
    "QualityScores",
    "episode_rounds",
    "quality_items",
    "quality_scores",
    "queue_quality",
    "run_judge_quality",
    "stored_verdicts",
]
