"""The free camera of the MuJoCo view: orbit, pan and zoom around a point of the scene."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np


@dataclass(frozen=True)
class FreeCamera:
    """A camera orbiting ``lookat`` (world metres) at ``distance``, angles in degrees."""

    azimuth: float = 135.0
    elevation: float = -25.0
    distance: float = 1.6
    lookat: tuple[float, float, float] = (0.0, 0.0, 0.45)

    def orbit(self, d_azimuth: float, d_elevation: float) -> FreeCamera:
        el = max(-89.0, min(89.0, self.elevation + d_elevation))
        return replace(self, azimuth=(self.azimuth + d_azimuth) % 360.0, elevation=el)

    def zoom(self, factor: float) -> FreeCamera:
        return replace(self, distance=max(0.2, min(10.0, self.distance * factor)))

    def pan(self, dx: float, dy: float) -> FreeCamera:
        """Move the point looked at sideways and up, in metres, as seen from the camera."""
        a = np.radians(self.azimuth)
        right = np.array([np.sin(a), -np.cos(a), 0.0])
        x, y, z = np.asarray(self.lookat) + right * dx + np.array([0.0, 0.0, dy])
        return replace(self, lookat=(float(x), float(y), float(z)))
