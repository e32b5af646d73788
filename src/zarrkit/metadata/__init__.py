"""Metadata documents, data types and fill values for Zarr v2 and v3.

>>> from zarrkit.metadata import ArrayMetadataV2, ArrayMetadataV3
>>> ArrayMetadataV2.__name__, ArrayMetadataV3.__name__
('ArrayMetadataV2', 'ArrayMetadataV3')
"""

from zarrkit.metadata.chunk_grid import (
    ChunkGrid,
    RectilinearChunkGrid,
    RegularChunkGrid,
    parse_chunk_grid,
    register_chunk_grid,
)
from zarrkit.metadata.chunk_key_encoding import ChunkKeyEncoding, register_chunk_key_encoding
from zarrkit.metadata.dtypes_v3 import (
    DataTypeV3,
    UnknownDataTypeError,
    data_type_v3_from_numpy,
    parse_data_type_v3,
    register_data_type,
)
from zarrkit.metadata.fill_value import (
    decode_fill_value_v3,
    default_fill_value_v3,
    encode_fill_value_v3,
)
from zarrkit.metadata.v2 import ArrayMetadataV2, GroupMetadataV2
from zarrkit.metadata.v3 import ZARR_JSON, ArrayMetadataV3, GroupMetadataV3, parse_node_v3

__all__ = [
    "ZARR_JSON",
    "ArrayMetadataV2",
    "ArrayMetadataV3",
    "ChunkGrid",
    "ChunkKeyEncoding",
    "DataTypeV3",
    "GroupMetadataV2",
    "GroupMetadataV3",
    "RectilinearChunkGrid",
    "RegularChunkGrid",
    "UnknownDataTypeError",
    "data_type_v3_from_numpy",
    "decode_fill_value_v3",
    "default_fill_value_v3",
    "encode_fill_value_v3",
    "parse_chunk_grid",
    "parse_data_type_v3",
    "parse_node_v3",
    "register_chunk_grid",
    "register_chunk_key_encoding",
    "register_data_type",
]
