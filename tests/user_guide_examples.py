# ruff: noqa: E501  (the docs' code is kept as written)
"""Python examples of zarr-python's user guide, transcribed session by session (reference data).

Each entry of ``PAGES`` maps a docs session (one namespace when the docs are built) to its
code blocks in document order; the text of each block is kept as in the docs (markdown
``python exec``/``python test`` fences, unindented when inside a tab or an admonition).
Source: zarr-python 3.4.2 as released (the ``zarr-3.4.2.tar.gz`` sdist on PyPI, whose
``docs/`` is the repository's at tag v3.4.2):

- quickstart: docs/quick-start.md
- s3demo: docs/quick-start.md
- arrays: docs/user-guide/arrays.md
- groups: docs/user-guide/groups.md
- attributes: docs/user-guide/attributes.md
- storage: docs/user-guide/storage.md
- consolidated_metadata: docs/user-guide/consolidated_metadata.md
- config: docs/user-guide/config.md
- data_types: docs/user-guide/data_types.md
- performance: docs/user-guide/performance.md
- perf_concurrency: docs/user-guide/performance.md
- perf_workers: docs/user-guide/performance.md
- experimental_fused: docs/user-guide/experimental.md
- experimental: docs/user-guide/experimental.md
- experimental_memory_cache: docs/user-guide/experimental.md
- experimental_local_cache: docs/user-guide/experimental.md
- experimental_final: docs/user-guide/experimental.md
- cli_open: docs/user-guide/cli.md
- gpu_demo: docs/user-guide/gpu.md

Blocks the docs do not run (``exec="false"``), not transcribed:

- docs/user-guide/storage.md: requires universal-pathlib, which is not in the docs environment
- docs/user-guide/data_types.md: REPL output transcript, not executable source
- docs/user-guide/performance.md: requires dask, which is not in the docs test environment

This is test input, not product code.
"""

# fmt: off
QUICKSTART: list[str] = [
    # 0
    '''import numpy as np
from pprint import pprint
import io
import warnings

warnings.filterwarnings(
  "ignore",
  message="Numcodecs codecs are not in the Zarr version 3 specification*",
  category=UserWarning
)
np.random.seed(0)
''',
    # 1
    '''import zarr
import numpy as np

# Create a 2D Zarr array
z = zarr.create_array(
    store="data/example-1.zarr",
    shape=(100, 100),
    chunks=(10, 10),
    dtype="f4",
    overwrite=True,
)

# Assign data to the array
z[:, :] = np.random.random((100, 100))
print(z.info)
''',
    # 2
    '''
# Create a 2D Zarr array with Blosc compression
z = zarr.create_array(
    store="data/example-2.zarr",
    shape=(100, 100),
    chunks=(10, 10),
    dtype="f4",
    overwrite=True,
    compressors=zarr.codecs.BloscCodec(
        cname="zstd",
        clevel=3,
        shuffle="shuffle"
    )
)

# Assign data to the array
z[:, :] = np.random.random((100, 100))
print(z.info)
''',
    # 3
    '''
# Create nested groups and add arrays
root = zarr.group("data/example-3.zarr", overwrite=True)
foo = root.create_group(name="foo")
bar = root.create_array(
    name="bar", shape=(100, 10), chunks=(10, 10), dtype="f4"
)
spam = foo.create_array(name="spam", shape=(10,), dtype="i4")

# Assign values
bar[:, :] = np.random.random((100, 10))
spam[:] = np.arange(10)

# print the hierarchy
print(root.tree())
''',
    # 4
    '''
# Create nested groups and add arrays
root = zarr.group("data/example-4.zarr", attributes={'name': 'root'}, overwrite=True)
foo = root.create_group(name="foo")
bar = root.create_array(
    name="bar", shape=(100, 10), chunks=(10, 10), dtype="f4"
)
nodes = {'': root.metadata} | {k: v.metadata for k,v in root.members()}
# Report nodes
output = io.StringIO()
pprint(nodes, stream=output, width=60, depth=3)
result = output.getvalue()
print(result)
# Create new hierarchy from nodes
new_nodes = dict(zarr.create_hierarchy(store=zarr.storage.MemoryStore(), nodes=nodes))
new_root = new_nodes['']
assert new_root.attrs == root.attrs
''',
    # 5
    '''
# Store the array in a ZIP file
store = zarr.storage.ZipStore("data/example-5.zip", mode="w")

z = zarr.create_array(
    store=store,
    shape=(100, 100),
    chunks=(10, 10),
    dtype="f4"
)

# write to the array
z[:, :] = np.random.random((100, 100))

# the ZipStore must be explicitly closed
store.close()
''',
    # 6
    '''
# Open the ZipStore in read-only mode
store = zarr.storage.ZipStore("data/example-5.zip", read_only=True)

z = zarr.open_array(store, mode='r')

# read the data as a NumPy Array
print(z[:])
''',
]

S3DEMO: list[str] = [
    # 0 (s3)
    '''import zarr
import numpy as np

z = zarr.create_array(
    "s3://example-bucket/foo", shape=(100, 100), chunks=(10, 10), dtype="f4"
)
z[:, :] = np.random.random((100, 100))
''',
]

ARRAYS: list[str] = [
    # 0
    '''import numpy as np
''',
    # 1
    '''import zarr
z = zarr.create_array(store="memory://arrays-demo", shape=(10000, 10000), chunks=(1000, 1000), dtype='int32')
print(z)
''',
    # 2
    '''z[:] = 42
''',
    # 3
    '''import numpy as np

z[0, :] = np.arange(10000)
z[:, 0] = np.arange(10000)
''',
    # 4
    '''print(z[0, 0])
''',
    # 5
    '''print(z[-1, -1])
''',
    # 6
    '''print(z[0, :])
''',
    # 7
    '''print(z[:, 0])
''',
    # 8
    '''print(z[:])
''',
    # 9
    '''z1 = zarr.create_array(store='data/example-1.zarr', shape=(10000, 10000), chunks=(1000, 1000), dtype='int32', overwrite=True)
''',
    # 10
    '''z1[:] = 42
z1[0, :] = np.arange(10000)
z1[:, 0] = np.arange(10000)
''',
    # 11
    '''z2 = zarr.open_array('data/example-1.zarr', mode='r')
print(np.all(z1[:] == z2[:]))
''',
    # 12
    '''a = np.arange(10)
zarr.save_array('data/example-2.zarr', a, mode="w")
print(zarr.load('data/example-2.zarr'))
''',
    # 13
    '''z = zarr.create_array(store='data/example-3.zarr', shape=(10000, 10000), dtype='int32', chunks=(1000, 1000), overwrite=True)
z[:] = 42
print(f"Original shape: {z.shape}")
z.resize((20000, 10000))
print(f"New shape: {z.shape}")
''',
    # 14
    '''a = np.arange(10000000, dtype='int32').reshape(10000, 1000)
z = zarr.create_array(store='data/example-4.zarr', shape=a.shape, dtype=a.dtype, chunks=(1000, 100), overwrite=True)
z[:] = a
print(f"Original shape: {z.shape}")
z.append(a)
print(f"Shape after first append: {z.shape}")
z.append(np.vstack([a, a]), axis=1)
print(f"Shape after second append: {z.shape}")
''',
    # 15
    '''arr = zarr.create_array({}, shape=(10,), dtype='int8', config={"write_empty_chunks": True})
print(arr.config)
''',
    # 16
    '''arr_f = arr.with_config({"order": "F"})
print(arr_f.config)
''',
    # 17
    '''serializer = zarr.codecs.BytesCodec(endian="little")
z_explicit_serializer = zarr.create_array(
    store="data/example-explicit-serializer.zarr",
    shape=(100,),
    chunks=(10,),
    dtype="int32",
    serializer=serializer,
    compressors=None,
    overwrite=True,
)
print(z_explicit_serializer.serializer)
print(f"Compressors: {z_explicit_serializer.compressors}")
''',
    # 18
    '''compressors = zarr.codecs.BloscCodec(cname='zstd', clevel=3, shuffle='bitshuffle')
data = np.arange(100000000, dtype='int32').reshape(10000, 10000)
z = zarr.create_array(store='data/example-5.zarr', shape=data.shape, dtype=data.dtype, chunks=(1000, 1000), compressors=compressors, overwrite=True)
z[:] = data
print(z.compressors)
''',
    # 19
    '''print(z.info)
''',
    # 20
    '''print(z.info_complete())
''',
    # 21
    '''z_no_compress = zarr.create_array(store='data/example-uncompressed.zarr', shape=(10000, 10000), chunks=(1000, 1000), dtype='int32', compressors=None, overwrite=True)
print(f"Compressors: {z_no_compress.compressors}")
''',
    # 22
    '''data = np.arange(100000000, dtype='int32').reshape(10000, 10000)
z = zarr.create_array(store='data/example-6.zarr', shape=data.shape, dtype=data.dtype, chunks=(1000, 1000), compressors=zarr.codecs.GzipCodec(level=1), overwrite=True)
z[:] = data
print(f"Compressors: {z.compressors}")
''',
    # 23
    '''import lzma
from zarr.codecs.numcodecs import LZMA

lzma_filters = [dict(id=lzma.FILTER_DELTA, dist=4), dict(id=lzma.FILTER_LZMA2, preset=1)]
compressors = LZMA(filters=lzma_filters)
data = np.arange(100000000, dtype='int32').reshape(10000, 10000)
z = zarr.create_array(store='data/example-7.zarr', shape=data.shape, dtype=data.dtype, chunks=(1000, 1000), compressors=compressors, overwrite=True)
print(f"Compressors: {z.compressors}")
''',
    # 24
    '''from zarr.codecs.numcodecs import Delta

filters = [Delta(dtype='int32')]
compressors = zarr.codecs.BloscCodec(cname='zstd', clevel=1, shuffle='shuffle')
data = np.arange(100000000, dtype='int32').reshape(10000, 10000)
z = zarr.create_array(store='data/example-9.zarr', shape=data.shape, dtype=data.dtype, chunks=(1000, 1000), filters=filters, compressors=compressors, overwrite=True)
print(z.info_complete())
''',
    # 25
    '''data = np.arange(10) ** 2
z = zarr.create_array(store='data/example-10.zarr', shape=data.shape, dtype=data.dtype, overwrite=True)
z[:] = data
print(z[:])
print(z.get_coordinate_selection([2, 5]))
''',
    # 26
    '''z.set_coordinate_selection([2, 5], [-1, -2])
print(z[:])
''',
    # 27
    '''data = np.arange(15).reshape(3, 5)
z = zarr.create_array(store='data/example-11.zarr', shape=data.shape, dtype=data.dtype, overwrite=True)
z[:] = data
print(z[:])
''',
    # 28
    '''print(z.get_coordinate_selection(([0, 2], [1, 3])))
''',
    # 29
    '''z.set_coordinate_selection(([0, 2], [1, 3]), [-1, -2])
print(z[:])
''',
    # 30
    '''print(z.vindex[[0, 2], [1, 3]])
z.vindex[[0, 2], [1, 3]] = [-3, -4]
''',
    # 31
    '''print(z[:])
''',
    # 32
    '''print(z[[0, 2], [1, 3]])
''',
    # 33
    '''print(z[1, [1, 3]])
print(z[[1, 1], [1, 3]])
''',
    # 34
    '''data = np.arange(10) ** 2
z = zarr.create_array(store='data/example-12.zarr', shape=data.shape, dtype=data.dtype, overwrite=True)
z[:] = data
print(z[:])
''',
    # 35
    '''sel = np.zeros_like(z, dtype=bool)
sel[2] = True
sel[5] = True
print(z.get_mask_selection(sel))
''',
    # 36
    '''z.set_mask_selection(sel, [-1, -2])
print(z[:])
''',
    # 37
    '''data = np.arange(15).reshape(3, 5)
z = zarr.create_array(store='data/example-13.zarr', shape=data.shape, dtype=data.dtype, overwrite=True)
z[:] = data
print(z[:])
''',
    # 38
    '''sel = np.zeros_like(z, dtype=bool)
sel[0, 1] = True
sel[2, 3] = True
print(z.get_mask_selection(sel))
''',
    # 39
    '''z.set_mask_selection(sel, [-1, -2])
print(z[:])
''',
    # 40
    '''print(z.vindex[sel])
''',
    # 41
    '''
z.vindex[sel] = [-3, -4]
print(z[:])
''',
    # 42
    '''data = np.arange(15).reshape(3, 5)
z = zarr.create_array(store='data/example-14.zarr', shape=data.shape, dtype=data.dtype, overwrite=True)
z[:] = data
print(z[:])
''',
    # 43
    '''print(z.get_orthogonal_selection(([0, 2], slice(None))))  # select first and third rows
''',
    # 44
    '''print(z.get_orthogonal_selection((slice(None), [1, 3])))  # select second and fourth columns
''',
    # 45
    '''print(z.get_orthogonal_selection(([0, 2], [1, 3])))  # select rows [0, 2] and columns [1, 3]
''',
    # 46
    '''z.set_orthogonal_selection(([0, 2], [1, 3]), [[-1, -2], [-3, -4]])
''',
    # 47
    '''data = np.arange(15).reshape(3, 5)
z = zarr.create_array(store='data/example-15.zarr', shape=data.shape, dtype=data.dtype, overwrite=True)
z[:] = data
print(z.oindex[[0, 2], :])  # select first and third rows
''',
    # 48
    '''print(z.oindex[:, [1, 3]])  # select second and fourth columns
''',
    # 49
    '''print(z.oindex[[0, 2], [1, 3]])  # select rows [0, 2] and columns [1, 3]
''',
    # 50
    '''z.oindex[[0, 2], [1, 3]] = [[-1, -2], [-3, -4]]
print(z[:])
''',
    # 51
    '''data = np.arange(15).reshape(3, 5)
z = zarr.create_array(store='data/example-16.zarr', shape=data.shape, dtype=data.dtype, overwrite=True)
z[:] = data
print(np.all(z.oindex[[0, 2], :] == z[[0, 2], :]))
''',
    # 52
    '''data = np.arange(100).reshape(10, 10)
z = zarr.create_array(store='data/example-17.zarr', shape=data.shape, dtype=data.dtype, chunks=(3, 3), overwrite=True)
z[:] = data
''',
    # 53
    '''print(z.get_block_selection(1))
''',
    # 54
    '''print(z[3:6])
''',
    # 55
    '''print(z.blocks[1])
''',
    # 56
    '''print(z.blocks[0, 1:3])
''',
    # 57
    '''z = zarr.create_array(store='data/example-18.zarr', shape=(6, 6), dtype=int, chunks=(2, 2), overwrite=True)
''',
    # 58
    '''z.set_block_selection((1, 0), 1)
print(z[...])
''',
    # 59
    '''z.blocks[:, 2] = 7
print(z[...])
''',
    # 60
    '''print(z.blocks[2, 1:3])
''',
    # 61
    '''a = zarr.create_array('data/example-20.zarr', shape=(10000, 10000), shards=(1000, 1000), chunks=(100, 100), dtype='uint8', overwrite=True)
a[:] = (np.arange(10000 * 10000) % 256).astype('uint8').reshape(10000, 10000)
print(a.info_complete())
''',
    # 62
    '''import zarr
zarr.config.set({"array.rectilinear_chunks": True})
''',
    # 63
    '''z = zarr.create_array(
    store=zarr.storage.MemoryStore(),
    shape=(60, 100),
    chunks=[[10, 20, 30], [50, 50]],
    dtype='int32',
)
print(z.info)
''',
    # 64
    '''import numpy as np
data = np.arange(60 * 100, dtype='int32').reshape(60, 100)
z[:] = data
# Read a slice that spans the first two chunks (sizes 10 and 20) along axis 0
print(z[5:25, 0:5])
''',
    # 65
    '''print(z.write_chunk_sizes)
''',
    # 66
    '''z_regular = zarr.create_array(
    store=zarr.storage.MemoryStore(),
    shape=(100, 80),
    chunks=(30, 40),
    dtype='int32',
)
print(z_regular.write_chunk_sizes)
''',
    # 67
    '''z = zarr.create_array(
    store=zarr.storage.MemoryStore(),
    shape=(30,),
    chunks=[[10, 20]],
    dtype='float64',
)
z[:] = np.arange(30, dtype='float64')
print(f"Before resize: chunk_sizes={z.write_chunk_sizes}")
z.resize((50,))
print(f"After resize:  chunk_sizes={z.write_chunk_sizes}")
''',
    # 68
    '''z.append(np.arange(10, dtype='float64'))
print(f"After append:  shape={z.shape}, chunk_sizes={z.write_chunk_sizes}")
''',
    # 69
    '''z = zarr.create_array(
    store=zarr.storage.MemoryStore(),
    shape=(60, 100),
    chunks=[[10, 20, 30], [50, 50]],
    dtype='float64',
    filters=[zarr.codecs.TransposeCodec(order=(1, 0))],
    compressors=[zarr.codecs.BloscCodec(cname='zstd', clevel=3)],
)
z[:] = np.arange(60 * 100, dtype='float64').reshape(60, 100)
np.testing.assert_array_equal(z[:], np.arange(60 * 100, dtype='float64').reshape(60, 100))
print("Roundtrip OK")
''',
    # 70
    '''z = zarr.create_array(
    store=zarr.storage.MemoryStore(),
    shape=(120, 100),
    chunks=(10, 10),
    shards=[[60, 40, 20], [50, 50]],
    dtype='int32',
)
z[:] = np.arange(120 * 100, dtype='int32').reshape(120, 100)
print(z[50:70, 40:60])
''',
    # 71
    '''print(f"chunks={z.chunks}")
print(f"shard sizes={z.write_chunk_sizes}")
print(z.info)
''',
]

GROUPS: list[str] = [
    # 0
    '''import zarr
root = zarr.create_group(store="memory://groups-demo")
print(root)
''',
    # 1
    '''foo = root.create_group('foo')
bar = foo.create_group('bar')
''',
    # 2
    '''z1 = bar.create_array(name='baz', shape=(10000, 10000), chunks=(1000, 1000), dtype='int32')
print(z1)
''',
    # 3
    '''print(root['foo'])
''',
    # 4
    '''print(root['foo/bar'])
''',
    # 5
    '''print(root['foo/bar/baz'])
''',
    # 6
    '''print(root.get_group('foo'))
''',
    # 7
    '''print(root.get_array('foo/bar/baz'))
''',
    # 8
    '''from zarr.errors import ContainsGroupError

try:
    root.get_array('foo')
except ContainsGroupError as e:
    print(e)
''',
    # 9
    '''print(root.tree())
''',
    # 10
    '''root = zarr.open_group('data/group.zarr', mode='w')
print(root)
''',
    # 11
    '''z = root.create_array(name='foo/bar/baz', shape=(10000, 10000), chunks=(1000, 1000), dtype='int32')
print(z)
''',
    # 12
    '''print(list(root.keys()))
print('foo' in root)
''',
    # 13
    '''for name, member in root.members():
    print(name, member)
''',
    # 14
    '''for name, member in root.members(max_depth=None):
    print(name, member)
''',
    # 15
    '''del root['foo/bar/baz']
for name, member in root.members(max_depth=None):
    print(name, member)
''',
    # 16
    '''from zarr import create_hierarchy
from zarr.core.group import GroupMetadata
from zarr.storage import LocalStore

from pprint import pprint
import io

node_spec = {'a/b/c': GroupMetadata()}
nodes_created = dict(create_hierarchy(store=LocalStore(root='data'), nodes=node_spec, overwrite=True))
# Report nodes (pprint is used for cleaner rendering in the docs)
output = io.StringIO()
pprint(nodes_created, stream=output, width=60)
print(output.getvalue())
''',
    # 17
    '''root = zarr.group(store="memory://diagnostics-demo")
foo = root.create_group('foo')
bar = foo.create_array(name='bar', shape=1000000, chunks=100000, dtype='int64')
bar[:] = 42
baz = foo.create_array(name='baz', shape=(1000, 1000), chunks=(100, 100), dtype='float32')
baz[:] = 4.2
print(root.info)
''',
    # 18
    '''print(foo.info)
''',
    # 19
    '''print(bar.info_complete())
''',
    # 20
    '''print(baz.info)
''',
    # 21
    '''print(root.tree())
''',
]

ATTRIBUTES: list[str] = [
    # 0
    '''import zarr
root = zarr.create_group(store="memory://attributes-demo")
root.attrs['foo'] = 'bar'
z = root.create_array(name='zzz', shape=(10000, 10000), dtype='int32')
z.attrs['baz'] = 42
z.attrs['qux'] = [1, 4, 7, 12]
print(sorted(root.attrs))
''',
    # 1
    '''print('foo' in root.attrs)
''',
    # 2
    '''print(root.attrs['foo'])
''',
    # 3
    '''print(sorted(z.attrs))
''',
    # 4
    '''print(z.attrs['baz'])
''',
    # 5
    '''print(z.attrs['qux'])
''',
    # 6
    '''del z.attrs['baz']
print(sorted(z.attrs))
''',
    # 7
    '''z = z.update_attributes({'baz': 43, 'quux': True})
print(sorted(z.attrs))
''',
]

STORAGE: list[str] = [
    # 0
    '''import zarr

# Implicitly creates a writable LocalStore
group = zarr.create_group(store='data/foo/bar', overwrite=True)
print(group)
''',
    # 1
    '''# Implicitly creates a read-only FsspecStore
# Note: requires s3fs to be installed
group = zarr.open_group(
   store='s3://noaa-nwm-retro-v2-zarr-pds',
   mode='r',
   storage_options={'anon': True}
)
print(group)
''',
    # 2
    '''# Implicitly creates a MemoryStore
data = {}
group = zarr.create_group(store=data)
print(group)
''',
    # 3
    '''group = zarr.open_group(store='data/foo/bar')
print(group)
''',
    # 4
    '''from pathlib import Path
group = zarr.open_group(store=Path('data/foo/bar'))
print(group)
''',
    # 5
    '''# Note: requires s3fs to be installed
group = zarr.open_group(
   store='s3://noaa-nwm-retro-v2-zarr-pds',
   mode='r',
   storage_options={'anon': True}
)
print(group)
''',
    # 6
    '''group = zarr.create_group(store={})
print(group)
''',
    # 7
    '''group = zarr.create_group(store=None)
print(group)
''',
    # 8
    '''store = zarr.storage.LocalStore('data/foo/bar', read_only=True)
group = zarr.open_group(store=store, mode='r')
print(group)
''',
    # 9
    '''store = zarr.storage.ZipStore('data.zip', mode='w')
array = zarr.create_array(store=store, shape=(2,), dtype='float64')
print(array)
''',
    # 10
    '''store.close()
f = open('data.zip', mode='rb')  # must stay open while the store is used
array = zarr.open_array(store=zarr.storage.ZipStore(f), mode='r')
print(array[:])
f.close()
''',
    # 11
    '''# Note: requires s3fs to be installed
store = zarr.storage.FsspecStore.from_url(
   's3://noaa-nwm-retro-v2-zarr-pds',
   read_only=True,
   storage_options={'anon': True}
)
group = zarr.open_group(store=store, mode='r')
print(group)
''',
    # 12
    '''# Note: requires s3fs to be installed
import fsspec
fs = fsspec.filesystem('s3', anon=True, asynchronous=True)
store = zarr.storage.FsspecStore(fs, path='noaa-nwm-retro-v2-zarr-pds', read_only=True)
print(store)
''',
    # 13
    '''data = {}
store = zarr.storage.MemoryStore(data)
array = zarr.create_array(store=store, shape=(2,), dtype='float64')
print(array)
''',
    # 14
    '''from zarr.storage import ObjectStore
from obstore.store import MemoryStore

store = ObjectStore(MemoryStore())
array = zarr.create_array(store=store, shape=(2,), dtype='float64')
print(array)
''',
    # 15
    '''from zarr.storage import ObjectStore
from obstore.store import S3Store

s3_store = S3Store('noaa-nwm-retro-v2-zarr-pds', skip_signature=True, region="us-west-2")
store = zarr.storage.ObjectStore(store=s3_store, read_only=True)
group = zarr.open_group(store=store, mode='r')
print(group.info)
''',
]

CONSOLIDATED_METADATA: list[str] = [
    # 0
    '''import zarr
import warnings

warnings.filterwarnings("ignore", category=UserWarning)
group = zarr.create_group(store="memory://consolidated-metadata-demo")
print(group)
array = group.create_array(shape=(1,), name='a', dtype='float64')
print(array)
''',
    # 1
    '''array = group.create_array(shape=(2, 2), name='b', dtype='float64')
print(array)
''',
    # 2
    '''array = group.create_array(shape=(3, 3, 3), name='c', dtype='float64')
print(array)
''',
    # 3
    '''result = zarr.consolidate_metadata("memory://consolidated-metadata-demo")
print(result)
''',
    # 4
    '''from pprint import pprint
import io

consolidated = zarr.open_group(store="memory://consolidated-metadata-demo")
consolidated_metadata = consolidated.metadata.consolidated_metadata.metadata

output = io.StringIO()
pprint(dict(sorted(consolidated_metadata.items())), stream=output, width=60)
print(output.getvalue())
''',
    # 5
    '''print(consolidated['a'])  # no read / HTTP request to the Store is required
''',
    # 6
    '''child = group.create_group('child', attributes={'kind': 'child'})
grandchild = child.create_group('grandchild', attributes={'kind': 'grandchild'})
consolidated = zarr.consolidate_metadata("memory://consolidated-metadata-demo")

output = io.StringIO()
pprint(consolidated['child'].metadata.consolidated_metadata, stream=output, width=60)
print(output.getvalue())
''',
    # 7
    '''group = zarr.open_group(store="memory://consolidated-metadata-demo", use_consolidated=False)
print(group.metadata.consolidated_metadata)
''',
]

CONFIG: list[str] = [
    # 0
    '''import zarr

zarr.config.set({'array.order': 'F'})

print(zarr.config.get('array.order'))
''',
    # 1
    '''zarr.config.reset()

with zarr.config.set({'array.order': 'F'}):
    print(zarr.config.get('array.order'))

print(zarr.config.get('array.order'))
''',
    # 2
    '''from pprint import pprint
import io
output = io.StringIO()
zarr.config.pprint(stream=output, width=60)
print(output.getvalue())
''',
]

DATA_TYPES: list[str] = [
    # 0
    '''import zarr
import numpy as np
import json

store = {}
np_dtype = np.dtype('int64')
print(np_dtype.str)
''',
    # 1
    '''z = zarr.create_array(store=store, shape=(1,), dtype=np_dtype, zarr_format=2)
dtype_meta = json.loads(store['.zarray'].to_bytes())["dtype"]
print(dtype_meta)
''',
    # 2
    '''store = {}
np_dtype = np.dtype([('field_a', '>i2'), ('field_b', [('subfield_c', '>f4'), ('subfield_d', 'i2')])])
print(np_dtype.str)
''',
    # 3
    '''z = zarr.create_array(store=store, shape=(1,), dtype=np_dtype, zarr_format=2)
dtype_meta = json.loads(store['.zarray'].to_bytes())["dtype"]
print(dtype_meta)
''',
    # 4
    '''from zarr.dtype import Int8
import numpy as np
int8 = Int8.from_native_dtype(np.dtype('int8'))
''',
    # 5
    '''native_dtype = int8.to_native_dtype()
assert native_dtype == np.dtype('int8')
''',
    # 6
    '''default_value = int8.default_scalar()
assert default_value == np.int8(0)
''',
    # 7
    '''json_v2 = int8.to_json(zarr_format=2)
print(json_v2)
''',
    # 8
    '''json_v3 = int8.to_json(zarr_format=3)
print(json_v3)
''',
    # 9
    '''json_value = int8.to_json_scalar(42, zarr_format=3)
print(json_value)
''',
    # 10
    '''scalar_value = int8.from_json_scalar(42, zarr_format=3)
assert scalar_value == np.int8(42)
''',
    # 11
    '''from zarr import create_array
import numpy as np
a = create_array({}, shape=(10,), dtype=np.dtype('int'))
print(a)
''',
    # 12
    '''a = create_array({}, shape=(10,), dtype='<i8')
print(a)
''',
    # 13
    '''print(type(a.dtype))
''',
    # 14
    '''from zarr import create_array
import numpy as np
a = create_array({}, shape=(10,), dtype=[('a', 'f8'), ('b', 'i8')])
print(a.dtype) # this is the NumPy data type
''',
    # 15
    '''print(a.metadata.data_type) # this is the Zarr data type
''',
    # 16
    '''import numpy as np
from zarr.dtype import parse_dtype
my_dtype = np.dtype('>M8[10s]')
print(parse_dtype(my_dtype, zarr_format=2))
''',
    # 17
    '''dtype_str = '>M8[10s]'
print(parse_dtype(dtype_str, zarr_format=2))
''',
    # 18
    '''from zarr.dtype import DateTime64
zdt = DateTime64(endianness='big', scale_factor=10, unit='s')
print(parse_dtype(zdt, zarr_format=2)) # Use a ZDType (this is a no-op)
''',
    # 19
    '''dt_dict = {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 10}}
print(parse_dtype(dt_dict, zarr_format=3))
''',
    # 20
    '''print(parse_dtype(dt_dict, zarr_format=3).to_json(zarr_format=3))
''',
]

PERFORMANCE: list[str] = [
    # 0
    '''import zarr
z1 = zarr.create_array(store={}, shape=(10000, 10000), chunks=(100, 10000), dtype='int32')
print(z1.chunks)
''',
    # 1
    '''z2 = zarr.create_array(store={}, shape=(10000, 10000), chunks=(10000, 100), dtype='int32')
print(z2.chunks)
''',
    # 2
    '''z3 = zarr.create_array(store={}, shape=(10000, 10000), chunks=(1000, 1000), dtype='int32')
print(z3.chunks)
''',
    # 3
    '''z4 = zarr.create_array(store={}, shape=(10000, 10000), chunks='auto', dtype='int32')
print(z4.chunks)
''',
    # 4
    '''z5 = zarr.create_array(store={}, shape=(10000, 10000), chunks=(10000, 10000), dtype='int32')
print(z5.chunks)
''',
    # 5
    '''z6 = zarr.create_array(store={}, shape=(10000, 10000, 1000), shards=(1000, 1000, 1000), chunks=(100, 100, 100), dtype='uint8')
print(z6.info)
''',
    # 6
    '''import numpy as np

c = zarr.create_array(store={}, shape=(10000, 10000), chunks=(1000, 1000), dtype='int32', config={'order': 'C'})
print(c[:100, :100].flags.c_contiguous)
''',
    # 7
    '''with zarr.config.set({'array.order': 'F'}):
    f = zarr.create_array(store={}, shape=(10000, 10000), chunks=(1000, 1000), dtype='int32')
print(f[:100, :100].flags.f_contiguous)
''',
    # 8
    '''arr = zarr.create_array(store={}, shape=(1,), dtype='uint8')
assert arr.config.write_empty_chunks == False
''',
    # 9
    '''import zarr
import numpy as np
import time

def timed_write(write_empty_chunks):
    """
    Measure the time required and number of objects created when writing
    to a Zarr array with random ints or fill value.
    """
    chunks = (8192,)
    shape = (chunks[0] * 1024,)
    data = np.random.randint(0, 255, shape)
    dtype = 'uint8'
    arr = zarr.create_array(
        f'data/example-{write_empty_chunks}.zarr',
        shape=shape,
        chunks=chunks,
        dtype=dtype,
        fill_value=0,
        overwrite=True,
        config={'write_empty_chunks': write_empty_chunks}
     )
    # initialize all chunks
    arr[:] = 100
    result = []
    for value in (data, arr.fill_value):
        start = time.time()
        arr[:] = value
        elapsed = time.time() - start
        result.append((elapsed, arr.nchunks_initialized))
    return result

# log results
for write_empty_chunks in (True, False):
    full, empty = timed_write(write_empty_chunks)
    print(f'\\nwrite_empty_chunks={write_empty_chunks}:\\n\\tRandom Data: {full[0]:.4f}s, {full[1]} objects stored\\n\\t Empty Data: {empty[0]:.4f}s, {empty[1]} objects stored\\n')
''',
    # 10
    '''import pickle
data = np.arange(100000)
z1 = zarr.create_array(store='data/perf-example-2.zarr', shape=data.shape, chunks=data.shape, dtype=data.dtype, overwrite=True)
z1[:] = data
s = pickle.dumps(z1)
z2 = pickle.loads(s)
assert z1 == z2
print(np.all(z1[:] == z2[:]))
''',
]

PERF_CONCURRENCY: list[str] = [
    # 0
    '''import zarr

# Set concurrency for the current session
zarr.config.set({'async.concurrency': 128})

# Or use environment variable
# export ZARR_ASYNC_CONCURRENCY=128
''',
]

PERF_WORKERS: list[str] = [
    # 0
    '''import zarr

zarr.config.set({'threading.max_workers': 8})
''',
]

EXPERIMENTAL_FUSED: list[str] = [
    # 0
    '''import zarr

zarr.config.set(
    {"codec_pipeline.path": "zarr.core.codec_pipeline.FusedCodecPipeline"}
)
''',
    # 1
    '''import numpy as np
import zarr
from zarr.storage import MemoryStore

with zarr.config.set(
    {"codec_pipeline.path": "zarr.core.codec_pipeline.FusedCodecPipeline"}
):
    # A sharded array on an in-memory store -- the low-latency case the
    # synchronous pipeline targets.
    arr = zarr.create_array(
        store=MemoryStore(),
        shape=(1000, 1000),
        chunks=(100, 100),
        shards=(1000, 1000),
        dtype="float32",
    )
    arr[:] = np.random.random((1000, 1000)).astype("float32")
    result = arr[:]

print(result.shape)
''',
    # 2
    '''import zarr

zarr.config.set(
    {"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}
)
''',
    # 3
    '''import zarr

# Use a fixed-size thread pool for codec compute.
zarr.config.set({"codec_pipeline.max_workers": 8})

# Or "auto", sized to the number of CPUs.
zarr.config.set({"codec_pipeline.max_workers": None})
''',
]

EXPERIMENTAL: list[str] = [
    # 0
    '''import zarr
from zarr.storage import LocalStore
import numpy as np
from tempfile import mkdtemp
from zarr.experimental.cache_store import CacheStore

# Create a local store and a separate cache store
local_store_path = mkdtemp(suffix='.zarr')
source_store = LocalStore(local_store_path)
cache_store = zarr.storage.MemoryStore()  # In-memory cache
cached_store = CacheStore(
    store=source_store,
    cache_store=cache_store,
    max_size=256*1024*1024  # 256MB cache
)

# Create an array using the cached store
zarr_array = zarr.zeros((100, 100), chunks=(10, 10), dtype='f8', store=cached_store, mode='w')

# Write some data to force chunk creation
zarr_array[:] = np.random.random((100, 100))
''',
    # 1
    '''import time

# Benchmark reading with cache
start = time.time()
for _ in range(100):
    _ = zarr_array[:]
elapsed_cache = time.time() - start

# Compare with direct store access (without cache)
zarr_array_nocache = zarr.open(local_store_path, mode='r')
start = time.time()
for _ in range(100):
    _ = zarr_array_nocache[:]
elapsed_nocache = time.time() - start

# Cache provides speedup for repeated access
speedup = elapsed_nocache / elapsed_cache
print(f"Speedup is {speedup}")
''',
    # 2
    '''# Unlimited cache size (use with caution)
cache = CacheStore(
    store=source_store,
    cache_store=cache_store,
    max_size=None
)
''',
    # 3
    '''# Cache expires after 1 hour
cache = CacheStore(
    store=source_store,
    cache_store=cache_store,
    max_age_seconds=3600
)

# Cache never expires
cache = CacheStore(
    store=source_store,
    cache_store=cache_store,
    max_age_seconds="infinity"
)
''',
    # 4
    '''# Cache data when writing (default)
cache = CacheStore(
    store=source_store,
    cache_store=cache_store,
    cache_set_data=True
)

# Don't cache written data (read-only cache)
cache = CacheStore(
    store=source_store,
    cache_store=cache_store,
    cache_set_data=False
)
''',
    # 5
    '''# Access some data to generate cache activity
# (these chunks were already cached by the reads above, so both accesses are cache hits)
data = zarr_array[0:50, 0:50]
data = zarr_array[0:50, 0:50]

# Get comprehensive cache information
info = cached_store.cache_info()
print(info['cache_store_type'])  # e.g., 'MemoryStore'
print(info['max_age_seconds'])
print(info['max_size'])
print(info['current_size'])
print(info['tracked_keys'])
print(info['cached_keys'])
print(info['cache_set_data'])
''',
    # 6
    '''# Clear all cached data and tracking information
import asyncio
asyncio.run(cached_store.clear_cache())

# Check cache info after clearing
info = cached_store.cache_info()
assert info['tracked_keys'] == 0
assert info['current_size'] == 0
''',
]

EXPERIMENTAL_MEMORY_CACHE: list[str] = [
    # 0
    '''from zarr.storage import LocalStore, MemoryStore
from zarr.experimental.cache_store import CacheStore
from tempfile import mkdtemp

local_store_path = mkdtemp(suffix='.zarr')
source_store = LocalStore(local_store_path)
cache_store = MemoryStore()
cached_store = CacheStore(
    store=source_store,
    cache_store=cache_store,
    max_size=128*1024*1024
)
''',
]

EXPERIMENTAL_LOCAL_CACHE: list[str] = [
    # 0
    '''from tempfile import mkdtemp
from zarr.storage import MemoryStore, LocalStore
from zarr.experimental.cache_store import CacheStore

memory_store = MemoryStore()
local_store_path = mkdtemp(suffix='.zarr')
persistent_cache = LocalStore(local_store_path)
cached_store = CacheStore(
    store=memory_store,
    cache_store=persistent_cache,
    max_size=256*1024*1024
)
''',
]

EXPERIMENTAL_FINAL: list[str] = [
    # 0
    '''import numpy as np
import time
from tempfile import mkdtemp
import zarr
import zarr.storage
from zarr.experimental.cache_store import CacheStore

# Create test data with dual-store cache
local_store_path = mkdtemp(suffix='.zarr')
source_store = zarr.storage.LocalStore(local_store_path)
cache_store = zarr.storage.MemoryStore()
cached_store = CacheStore(
    store=source_store,
    cache_store=cache_store,
    max_size=256*1024*1024
)
zarr_array = zarr.zeros((100, 100), chunks=(10, 10), dtype='f8', store=cached_store, mode='w')
zarr_array[:] = np.random.random((100, 100))

# Demonstrate cache effectiveness with repeated access
start = time.time()
data = zarr_array[20:30, 20:30]  # First access (cache miss)
first_access = time.time() - start
print(f"First access took {first_access}")

start = time.time()
data = zarr_array[20:30, 20:30]  # Second access (cache hit)
second_access = time.time() - start
print(f"Second access took {second_access}")

# Check cache statistics
info = cached_store.cache_info()
assert info['cached_keys'] > 0  # Should have cached keys
assert info['current_size'] > 0  # Should have cached data
print(f"Cache contains {info['cached_keys']} keys with {info['current_size']} bytes")
''',
]

CLI_OPEN: list[str] = [
    # 0
    '''import zarr

# create a small array to open (stands in for the migrated store)
zarr.create_array("data/cli-demo.zarr", shape=(4, 4), chunks=(2, 2), dtype="i4", overwrite=True)

zarr_with_v3_metadata = zarr.open("data/cli-demo.zarr", zarr_format=3)
''',
]

GPU_DEMO: list[str] = [
    # 0 (gpu)
    '''import zarr
import cupy as cp

zarr.config.enable_gpu()
z = zarr.create_array(
    store="memory://gpu-demo", shape=(100, 100), chunks=(10, 10), dtype="float32",
)
assert isinstance(z[:10, :10], cp.ndarray)
''',
    # 1 (gpu)
    '''with zarr.config.enable_gpu():
    data = z[:10, :10]
assert isinstance(data, cp.ndarray)
''',
]

# fmt: on

PAGES: dict[str, list[str]] = {
    "quickstart": QUICKSTART,
    "s3demo": S3DEMO,
    "arrays": ARRAYS,
    "groups": GROUPS,
    "attributes": ATTRIBUTES,
    "storage": STORAGE,
    "consolidated_metadata": CONSOLIDATED_METADATA,
    "config": CONFIG,
    "data_types": DATA_TYPES,
    "performance": PERFORMANCE,
    "perf_concurrency": PERF_CONCURRENCY,
    "perf_workers": PERF_WORKERS,
    "experimental_fused": EXPERIMENTAL_FUSED,
    "experimental": EXPERIMENTAL,
    "experimental_memory_cache": EXPERIMENTAL_MEMORY_CACHE,
    "experimental_local_cache": EXPERIMENTAL_LOCAL_CACHE,
    "experimental_final": EXPERIMENTAL_FINAL,
    "cli_open": CLI_OPEN,
    "gpu_demo": GPU_DEMO,
}
