"""Type aliases shared by the media modules."""

import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]
"""An HxWx3 (RGB or BGR) or HxW uint8 picture."""
