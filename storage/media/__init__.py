"""Frame-exact access to video files: index, exact reader, seek cache, frame cache, stills.

Everything here addresses a video frame by its index in presentation order, backed by the
frame's presentation timestamp (see `VideoIndex`). PyAV and OpenCV are imported lazily, so
importing this package is cheap.
"""

from storage.media._av import open_video
from storage.media._cache import FrameCache
from storage.media._errors import MediaError
from storage.media._image import probe_image, read_image_rgb, write_png
from storage.media._index import VideoIndex
from storage.media._indexer import index_video
from storage.media._proxy import DEFAULT_STORE_CRF
from storage.media._reader import FrameReader
from storage.media._source import FrameSource
from storage.media._store import FrameStore

__all__ = [
    "DEFAULT_STORE_CRF",
    "FrameCache",
    "FrameReader",
    "FrameSource",
    "FrameStore",
    "MediaError",
    "VideoIndex",
    "index_video",
    "open_video",
    "probe_image",
    "read_image_rgb",
    "write_png",
]
