"""Video and image files: frame-exact access, blind copies, content addresses, continuity scan.

Everything here addresses a video frame by its index in presentation order, backed by the
frame's presentation timestamp (see `VideoIndex`): the exact reader, the seek cache, the frame
cache and stills. `blind_copy` remuxes a video for a rater bundle without its metadata;
`file_sha256` is the name a project stores a file under; `check_video_container` refuses a
playlist or concat list (it names other files) wherever a video comes in. The continuity
scan, which finds the jumps between frames, is the subpackage `storage.media.continuity`.
Nothing here knows the project or writes SQL; PyAV and OpenCV are imported lazily, so
importing this package is cheap.
"""

from storage.media._av import open_video
from storage.media._blind import BlindingError, blind_copy
from storage.media._cache import FrameCache
from storage.media._container import check_video_container
from storage.media._errors import MediaError
from storage.media._files import file_sha256
from storage.media._image import probe_image, read_image_rgb, write_png
from storage.media._index import VideoIndex
from storage.media._indexer import index_video
from storage.media._proxy import DEFAULT_STORE_CRF
from storage.media._reader import FrameReader
from storage.media._source import FrameSource
from storage.media._store import FrameStore

__all__ = [
    "DEFAULT_STORE_CRF",
    "BlindingError",
    "FrameCache",
    "FrameReader",
    "FrameSource",
    "FrameStore",
    "MediaError",
    "VideoIndex",
    "blind_copy",
    "check_video_container",
    "file_sha256",
    "index_video",
    "open_video",
    "probe_image",
    "read_image_rgb",
    "write_png",
]
