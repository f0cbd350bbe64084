"""Which continuity windows a run offers the model, and how the run records them.

The option (``JudgeConfig.continuity_windows``) takes the scan's strongest windows and names
them, in time order, at every Physics gate as places worth an ``inspect_video`` look. Only the
Physics gates get them: the Task gates' rubric tells the model to ignore physical glitches
(flicker, floating, clipping), so pointing it at discontinuities there would argue with its own
instructions. The run's configuration keeps the scan version and the windows exactly as shown,
so runs with and without the option can be compared.
"""

from __future__ import annotations

from typing import Any

from judge.video._config import JudgeConfig, PipelineError
from judge.video._prompts import candidate_rows
from storage.media.continuity import Scan
from storage.media.continuity import Window as ScanWindow


def offered_windows(config: JudgeConfig, scan: Scan | None) -> tuple[ScanWindow, ...]:
    """The ``continuity_windows`` strongest windows of ``scan``, in time order (none when the
    option is off)."""
    n = config.continuity_windows
    if n <= 0:
        return ()
    if scan is None:
        raise PipelineError(
            f"continuity_windows is {n} but the video has no continuity scan to offer from"
        )
    top = sorted(scan.windows, key=lambda w: -w.score)[:n]
    return tuple(sorted(top, key=lambda w: (w.start_s, w.end_s)))


def continuity_record(config: JudgeConfig, scan: Scan | None) -> dict[str, Any]:
    """What the run's configuration holds about the windows offered (nothing when off)."""
    if config.continuity_windows <= 0 or scan is None:
        return {}
    windows = offered_windows(config, scan)
    return {"continuity": {"scan_version": scan.version, "scan_windows": len(scan.windows),
                           "offered": candidate_rows(windows)}}  # fmt: skip
