"""Per-frame continuity signals, from one sequential decode at a small analysis size.

Every frame ``t ≥ 1`` is compared with frame ``t − 1`` (grey, :data:`WIDTH` pixels wide):

- ``diff``: frame-difference energy, the mean absolute grey difference;
- ``flow``: mean optical-flow magnitude (DIS, OpenCV's fastest dense flow), in pixels of the
  analysis size: how much moved;
- ``residual``: what the flow cannot explain. Frame ``t − 1`` is warped along the flow onto
  frame ``t``, and the largest mean absolute difference over a 4×4 grid of blocks is kept, so
  content that appears in one part of the picture with no motion path to it (a hand that jumps,
  an object that is suddenly doubled) counts in full rather than diluted by a still background;
- ``consistency``: the forward–backward flow error (pixels): a real motion maps back onto
  itself, a cut between unrelated pictures does not;
- ``hist``: the Hellinger distance between the two frames' 32-bin grey histograms;
- ``ssim``: one minus the structural similarity of the two frames (8×8 Gaussian windows).

Frame 0 has no predecessor: its signals are 0. Decoding is single-threaded (so the scan's
speed is measured on one core) and at the stream's own frame order, presentation time taken
from the packets, as the frame-exact reader does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from storage.media._av import open_video
from storage.media._errors import MediaError

WIDTH = 160  # analysis width in pixels: 480p and 1080p clips are both scanned at 160×~90
GRID = 4  # residual blocks per side
SIGNALS = ("diff", "flow", "residual", "consistency", "hist", "ssim")

Gray = npt.NDArray[np.uint8]
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Signals:
    """The per-frame signals of one video (each an array of ``frame_count`` floats) and the
    source time of each frame (seconds from the first)."""

    times: Floats
    values: dict[str, Floats]

    @property
    def frame_count(self) -> int:
        return len(self.times)


def _analysis_size(width: int, height: int) -> tuple[int, int]:
    h = max(2, round(height * WIDTH / max(width, 1) / 2) * 2)
    return WIDTH, h


def gray_frames(path: Path) -> tuple[list[Gray], Floats]:
    """Every frame of ``path`` as a small grey image, with its presentation time (seconds
    from the first frame), in presentation order."""
    import av

    container, stream = open_video(path)  # a missing or broken file: MediaError, named
    with container:
        stream.thread_type = "SLICE"  # one core: the scan's speed is a per-core figure
        stream.codec_context.thread_count = 1
        size = _analysis_size(stream.codec_context.width, stream.codec_context.height)
        frames: list[tuple[float, Gray]] = []
        base = stream.time_base
        try:
            for frame in container.decode(stream):
                pts = frame.pts if frame.pts is not None else len(frames)
                img = frame.reformat(width=size[0], height=size[1], format="gray")
                gray: Gray = np.asarray(img.to_ndarray(), dtype=np.uint8)
                frames.append((float(pts * base) if base else float(pts), gray))
        except av.error.FFmpegError as err:
            raise MediaError(path, f"cannot decode frame {len(frames)} ({err})") from None
    if not frames:
        raise MediaError(path, "no frames to scan")
    frames.sort(key=lambda f: f[0])
    t0 = frames[0][0]
    return [g for _t, g in frames], np.array([t - t0 for t, _g in frames])


def _ssim(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> float:
    import cv2

    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2

    def blur(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        return np.asarray(cv2.GaussianBlur(x, (7, 7), 1.5), dtype=np.float32)

    mu_a, mu_b = blur(a), blur(b)
    var_a = blur(a * a) - mu_a * mu_a
    var_b = blur(b * b) - mu_b * mu_b
    cov = blur(a * b) - mu_a * mu_b
    num = (2 * mu_a * mu_b + c1) * (2 * cov + c2)
    den = (mu_a * mu_a + mu_b * mu_b + c1) * (var_a + var_b + c2)
    return float(np.mean(num / den))


def _block_max(residual: npt.NDArray[np.float32]) -> float:
    h, w = residual.shape
    bh, bw = h // GRID, w // GRID
    blocks = residual[: bh * GRID, : bw * GRID].reshape(GRID, bh, GRID, bw)
    return float(blocks.mean(axis=(1, 3)).max())


def compute_signals(frames: list[Gray], times: Floats) -> Signals:
    """The signals of consecutive frame pairs (see the module docstring)."""
    import cv2  # here, not at the top: `import storage` must not load OpenCV

    n = len(frames)
    out = {name: np.zeros(n) for name in SIGNALS}
    if n < 2:
        return Signals(times, out)
    dis = cv2.DISOpticalFlow_create(cv2.DISOPTICAL_FLOW_PRESET_ULTRAFAST)  # type: ignore[attr-defined]
    h, w = frames[0].shape
    grid_x, grid_y = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    hists = [cv2.calcHist([f], [0], None, [32], [0, 256]).ravel() for f in frames]
    hists = [np.sqrt(hh / max(float(hh.sum()), 1.0)) for hh in hists]
    prev_f = frames[0].astype(np.float32)
    for t in range(1, n):
        cur, prev = frames[t], frames[t - 1]
        cur_f = cur.astype(np.float32)
        back = dis.calc(cur, prev, None)  # for each pixel of t: where it was in t − 1
        warped = cv2.remap(prev_f, grid_x + back[..., 0], grid_y + back[..., 1],
                           cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)  # fmt: skip
        fwd = dis.calc(prev, cur, None)
        # forward flow sampled where each pixel of t came from, added to the backward flow:
        # zero for a motion that maps back onto itself
        fwd_at = cv2.remap(fwd, grid_x + back[..., 0], grid_y + back[..., 1], cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_REPLICATE)  # fmt: skip
        out["diff"][t] = float(np.abs(cur_f - prev_f).mean())
        out["flow"][t] = float(np.hypot(back[..., 0], back[..., 1]).mean())
        out["residual"][t] = _block_max(np.abs(cur_f - warped))
        out["consistency"][t] = float(np.hypot(*(fwd_at + back).transpose(2, 0, 1)).mean())
        out["hist"][t] = float(np.sqrt(max(0.0, 1.0 - float(np.dot(hists[t], hists[t - 1])))))
        out["ssim"][t] = 1.0 - _ssim(cur_f, prev_f)
        prev_f = cur_f
    return Signals(times, out)


def scan_signals(path: Path) -> Signals:
    frames, times = gray_frames(path)
    return compute_signals(frames, times)
