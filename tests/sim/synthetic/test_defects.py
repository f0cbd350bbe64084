"""Every injected defect must be visible in the pixels, and the clean rollout must not show it."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from sim.synthetic import (
    BOX_WALL,
    Camera,
    Defect,
    DefectKind,
    RolloutPlan,
    RolloutTruth,
    Scene,
    SceneObject,
    Subgoal,
    render_rollout,
    rollout_truth,
)
from tests.sim.synthetic import (
    Frame,
    Mask,
    blobs,
    centroid,
    colour_mask,
    longest_run,
    max_step,
    skin_mask,
)

SIZE = (160, 90)
FPS = 24
SEED = 5

_O = SceneObject.make
SCENE = Scene(
    (
        _O("red block", "block", "red", -0.8, 0.95),
        _O("blue plate", "plate", "blue", -0.05, 1.75),
        _O("box", "box", "brown", 0.7, 1.25),
        _O("yellow block", "block", "yellow", -0.15, 1.0),
    ),
    "linen",
)
SUBGOALS = (Subgoal("red block", "blue plate"), Subgoal("yellow block", "box", "in"))


def _plan(kind: DefectKind | None, subgoal: int) -> RolloutPlan:
    defects = () if kind is None else (Defect(kind, subgoal),)
    return RolloutPlan(SCENE, SUBGOALS, defects)


@functools.cache
def _run(kind: DefectKind | None = None, subgoal: int = 0) -> tuple[list[Frame], RolloutTruth]:
    plan = _plan(kind, subgoal)
    frames = list(render_rollout(plan, size=SIZE, fps=FPS, seed=SEED))
    truth = rollout_truth(plan, fps=FPS, seed=SEED)
    assert truth.frame_count == len(frames)
    return frames, truth


def _track(frames: list[Frame], colour: str) -> list[tuple[float, float] | None]:
    return [centroid(colour_mask(f, colour)) for f in frames]


def _dist(a: tuple[float, float] | None, b: tuple[float, float] | None) -> float:
    assert a is not None and b is not None
    return float(np.hypot(a[0] - b[0], a[1] - b[1]))


def test_clean_rollout_completes_every_subgoal() -> None:
    frames, truth = _run()
    assert truth.defects == () and truth.subgoals_completed == 2
    assert 6.0 <= truth.duration_s <= 12.0
    # The hand enters and leaves: absent in the first and last frames, present in between.
    hand = [int(skin_mask(f).sum()) for f in frames]
    assert hand[0] == 0 and hand[-1] == 0 and max(hand) > 300
    # The red block ends on the blue plate, the yellow block inside the box.
    plate = colour_mask(frames[0], "blue")
    ys, xs = np.nonzero(plate)
    red_end = centroid(colour_mask(frames[-1], "red"))
    assert red_end is not None
    assert xs.min() < red_end[0] < xs.max() and ys.min() - 8 < red_end[1] < ys.max()
    assert _dist(_track(frames, "yellow")[-1], _track(frames, "yellow")[0]) > 20


def test_teleport_is_a_jump_between_two_frames() -> None:
    clean, _ = _run()
    frames, truth = _run("teleport", 0)
    assert [d.kind for d in truth.defects] == ["teleport"]
    clean_step = max_step(_track(clean, "red"))
    jump = max_step(_track(frames, "red"))
    assert jump > 2.5 * clean_step
    # The jump happens at the reported time.
    k = round(truth.defects[0].start_s * FPS)
    track = _track(frames, "red")
    assert max(_dist(track[i], track[i + 1]) for i in range(k - 1, k + 2)) == pytest.approx(jump)


def _far_blobs(mask: Mask) -> float:
    found = blobs(mask, 8)
    return max((_dist(a, b) for a, b in itertools.combinations(found, 2)), default=0.0)


def test_duplicate_leaves_a_copy_at_the_start() -> None:
    clean, _ = _run()
    frames, truth = _run("duplicate", 0)
    assert [d.kind for d in truth.defects] == ["duplicate"]
    assert len(blobs(colour_mask(clean[-1], "red"), 8)) == 1
    assert len(blobs(colour_mask(frames[-1], "red"), 8)) == 2
    assert _far_blobs(colour_mask(frames[-1], "red")) > 25
    assert max(_far_blobs(colour_mask(f, "red")) for f in clean) < 25
    start = centroid(colour_mask(frames[0], "red"))
    assert any(_dist(b, start) < 2 for b in blobs(colour_mask(frames[-1], "red"), 8))


def test_vanish_removes_the_object_for_more_than_half_a_second() -> None:
    clean, _ = _run()
    frames, truth = _run("vanish", 0)
    (window,) = truth.defects
    assert window.kind == "vanish" and window.end_s - window.start_s > 0.5
    gone = longest_run([not colour_mask(f, "red").any() for f in frames])
    assert gone > 0.5 * FPS
    assert longest_run([not colour_mask(f, "red").any() for f in clean]) < 0.25 * FPS


def _wall_band(box: SceneObject) -> Mask:
    """Screen region of the box's left wall (its solid, from the table to the rim)."""
    import cv2

    cam = Camera(*SIZE)
    x0 = box.x - box.half_w
    corners = np.array(
        [
            (x, y, z)
            for x in (x0, x0 + BOX_WALL)
            for y in (box.y - box.half_d, box.y + box.half_d)
            for z in (0.0, box.height)
        ]
    )
    hull = cv2.convexHull(cam.project_many(corners).astype(np.float32)).reshape(-1, 2)
    band = np.zeros((SIZE[1], SIZE[0]), np.uint8)
    cv2.fillPoly(band, [np.round(hull).astype(np.int32)], 1)
    return band.astype(bool)


def _straddle(mask: Mask, band: Mask) -> tuple[int, float]:
    """Rows where the object lies on both sides of the wall, and how much of the wall it covers
    there (an object carried over the wall covers it; one inside the wall is covered by it)."""
    rows, covered, total = 0, 0, 0
    for r in range(mask.shape[0]):
        cols = np.nonzero(band[r])[0]
        xs = np.nonzero(mask[r])[0]
        if len(cols) == 0 or len(xs) == 0:
            continue
        lo, hi = int(cols.min()), int(cols.max())
        if (xs < lo).any() and (xs > hi).any():
            rows += 1
            covered += int(mask[r, lo : hi + 1].sum())
            total += hi + 1 - lo
    return rows, covered / total if total else 1.0


def test_pass_through_shows_the_object_inside_the_wall() -> None:
    band = _wall_band(SCENE.object("box"))
    clean, _ = _run()
    frames, truth = _run("pass_through", 1)
    (window,) = truth.defects
    assert window.kind == "pass_through" and window.subgoal == 1
    inside = [
        _straddle(colour_mask(frames[k], "yellow"), band)
        for k in range(int(window.start_s * FPS), int(window.end_s * FPS) + 1)
    ]
    assert any(rows >= 3 and cover < 0.2 for rows, cover in inside)
    # The clean carry goes over the wall: whenever it straddles the wall it is drawn over it.
    for f in clean:
        rows, cover = _straddle(colour_mask(f, "yellow"), band)
        assert rows < 3 or cover > 0.4


def _first_move(frames: list[Frame], colour: str) -> tuple[int, float]:
    """First frame where the object has moved, and how far (px) the hand then is from it."""
    import cv2

    start = colour_mask(frames[0], colour)
    c0 = centroid(start)
    ys, xs = np.nonzero(start)
    near = np.zeros(start.shape, np.uint8)
    near[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1] = 1
    dist = cv2.distanceTransform(1 - near, cv2.DIST_L2, 3)
    for k, f in enumerate(frames):
        c = centroid(colour_mask(f, colour))
        if c is None or _dist(c, c0) > 1.0:
            hand = skin_mask(f)
            return k, float(dist[hand].min()) if hand.any() else float("inf")
    raise AssertionError("the object never moved")


def test_float_off_moves_the_object_before_the_hand_arrives() -> None:
    clean, _ = _run()
    frames, truth = _run("float_off", 0)
    (window,) = truth.defects
    assert window.kind == "float_off"
    k, gap = _first_move(frames, "red")
    assert gap > 8
    assert window.start_s <= k / FPS <= window.end_s
    _, clean_gap = _first_move(clean, "red")
    assert clean_gap < 1.5


def test_hover_keeps_the_released_object_in_the_air_and_drifting() -> None:
    clean, _ = _run()
    frames, truth = _run("hover", 0)
    assert [d.kind for d in truth.defects] == ["hover"]
    assert truth.subgoals_completed == 2
    clean_end = _track(clean, "red")[-1]
    end = _track(frames, "red")[-1]
    assert clean_end is not None and end is not None
    # Higher on screen than a block resting on the plate, and still moving with no hand around.
    assert end[1] < clean_end[1] - 2
    handless = [k for k, f in enumerate(frames) if not skin_mask(f).any() and k > FPS]
    tail = _track(frames, "red")
    assert _dist(tail[handless[0]], tail[-1]) > 0.6
    clean_tail = _track(clean, "red")
    assert _dist(clean_tail[handless[0]], clean_tail[-1]) == 0.0


def test_unfinished_stops_before_the_last_subgoal() -> None:
    frames, truth = _run("unfinished", 1)
    assert truth.subgoals_completed == 1
    assert [(d.kind, d.subgoal) for d in truth.defects] == [("unfinished", 1)]
    assert truth.duration_s < _run()[1].duration_s
    # The yellow block never left its place; the red block did.
    yellow = _track(frames, "yellow")
    assert _dist(yellow[0], yellow[-1]) < 0.5
    red = _track(frames, "red")
    assert _dist(red[0], red[-1]) > 20
    assert not skin_mask(frames[-1]).any()


def test_wrong_target_places_beside_the_plate() -> None:
    frames, truth = _run("wrong_target", 0)
    assert truth.subgoals_completed == 1
    assert [d.kind for d in truth.defects] == ["wrong_target"]
    ys, xs = np.nonzero(colour_mask(frames[0], "blue"))
    end = centroid(colour_mask(frames[-1], "red"))
    assert end is not None
    on_plate = xs.min() <= end[0] <= xs.max() and ys.min() - 8 <= end[1] <= ys.max()
    assert not on_plate
    # Still a tidy, supported placement: the block moved and rests on the table.
    start = centroid(colour_mask(frames[0], "red"))
    assert _dist(start, end) > 10


def test_no_attempt_touches_nothing() -> None:
    frames, truth = _run("no_attempt", 0)
    assert truth.subgoals_completed == 0
    assert [d.kind for d in truth.defects] == ["no_attempt"]
    assert max(int(skin_mask(f).sum()) for f in frames) > 300
    assert np.array_equal(frames[0], frames[-1])
    for colour in ("red", "yellow", "blue"):
        ys, xs = np.nonzero(colour_mask(frames[0], colour))
        for f in frames:
            fy, fx = np.nonzero(colour_mask(f, colour))
            if len(fx):
                assert xs.min() - 1 <= fx.min() and fx.max() <= xs.max() + 1
                assert ys.min() - 1 <= fy.min() and fy.max() <= ys.max() + 1
