"""A light-perspective head camera looking down at the table from above and behind."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

# Shadow offset per unit of height (light from the far left, shadows fall right and toward us).
LIGHT = (0.42, -0.38)


@dataclass(frozen=True)
class Camera:
    """Maps table coordinates (x across, y away from the viewer, z up) to pixels.

    A projective map of the table plane, so that far things are smaller and higher in the frame;
    heights shift points up the screen. Not a full pinhole model, on purpose: cheap and stable.
    """

    width: int
    height: int
    persp: float = 0.16  # how fast things shrink with distance
    ground: float = 0.80  # foreshortening of depth (sin of the camera tilt)
    upright: float = 0.60  # foreshortening of heights (cos of the tilt)

    @property
    def unit(self) -> float:
        """Pixels per table unit across, at the front edge (y = 0)."""
        return self.width / 2.8

    @property
    def row0(self) -> float:
        return self.height * 1.02

    def scale(self, y: float) -> float:
        return 1.0 / (1.0 + self.persp * max(y, -1.5))

    def project(self, x: float, y: float, z: float = 0.0) -> tuple[float, float]:
        s = self.scale(y)
        u = self.unit
        col = self.width / 2 + u * x * s
        row = self.row0 - u * self.ground * y * s - u * self.upright * z * s
        return col, row

    def project_many(self, pts: FloatArray) -> FloatArray:
        """Project an (N, 3) array of table points to (N, 2) pixels."""
        x, y, z = pts[:, 0], pts[:, 1], pts[:, 2]
        s = 1.0 / (1.0 + self.persp * np.maximum(y, -1.5))
        u = self.unit
        out = np.empty((pts.shape[0], 2))
        out[:, 0] = self.width / 2 + u * x * s
        out[:, 1] = self.row0 - u * self.ground * y * s - u * self.upright * z * s
        return out

    def px(self, y: float, length: float) -> float:
        """Screen length (pixels) of a horizontal table length at depth y."""
        return length * self.unit * self.scale(y)

    def ground_axes(self, y: float, r: float) -> tuple[float, float]:
        """Semi-axes (pixels) of a circle of radius r lying on the table at depth y."""
        s = self.scale(y)
        return r * self.unit * s, r * self.unit * self.ground * s * s

    def unproject_rows(self, rows: FloatArray) -> FloatArray:
        """Table depth y seen at each pixel row (for the ground texture)."""
        q = (self.row0 - rows) / (self.unit * self.ground)
        return q / np.maximum(1.0 - self.persp * q, 1e-3)

    def far_edge_row(self, y_far: float) -> float:
        return self.project(0.0, y_far)[1]

    def shadow_offset(self, y: float, z: float) -> tuple[float, float]:
        """Pixel offset of a shadow cast by a point at height z."""
        return self.px(y, LIGHT[0] * z), -self.px(y, LIGHT[1] * z) * self.ground
