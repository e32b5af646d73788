# ruff: noqa: E501  (the docs' code is kept as written)
"""Python examples of zarr-python's user guide, transcribed page by page (reference data).

Each entry of ``PAGES`` maps a page name to its code blocks in document order; the text of each
block is kept as in the docs (markdown ``python exec`` fences, no ``>>>`` prompts in these
versions). Source: repository zarr-developers/zarr-python, files and stored commits:

- quickstart: docs/quick-start.md @ 0b2eda4b44a50f98c44d0d30c38404696036c622
- arrays: docs/user-guide/arrays.md @ 0c2eabd75f87ed20dddcee5a5895c470c3d61370
- groups: docs/user-guide/groups.md @ 1056b9ee3cfa5a0a51c75124d02d41f6733c5f65
- attributes: docs/user-guide/attributes.md @ 11e459b1d434f2677ea5ed37f22b6491d7cdba92
- storage: docs/user-guide/storage.md @ 02360518a51b27a168b300ddada4484a1eb5b6d0
- consolidated_metadata: docs/user-guide/consolidated_metadata.md
  @ 015c3f36a9cef4c13819825603016fa624a39844

This is test input, not product code.
"""

# fmt: off
QUICKSTART: list[str] = [
    # 0
    '''import shutil
shutil.rmtree('data', ignore_errors=True)
import numpy as np
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
    dtype="f4"
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
root = zarr.group("data/example-3.zarr")
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
root = zarr.group("data/example-4.zarr", attributes={'name': 'root'})
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
    # 7 (session "s3demo" in the docs: a separate session, marked s3)
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
    '''import shutil
shutil.rmtree('data', ignore_errors=True)
import numpy as np
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
    '''z1 = zarr.create_array(store='data/example-1.zarr', shape=(10000, 10000), chunks=(1000, 1000), dtype='int32')
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
zarr.save('data/example-2.zarr', a)
print(zarr.load('data/example-2.zarr'))
''',
    # 13
    '''z = zarr.create_array(store='data/example-3.zarr', shape=(10000, 10000), dtype='int32', chunks=(1000, 1000))
z[:] = 42
print(f"Original shape: {z.shape}")
z.resize((20000, 10000))
print(f"New shape: {z.shape}")
''',
    # 14
    '''a = np.arange(10000000, dtype='int32').reshape(10000, 1000)
z = zarr.create_array(store='data/example-4.zarr', shape=a.shape, dtype=a.dtype, chunks=(1000, 100))
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
    '''compressors = zarr.codecs.BloscCodec(cname='zstd', clevel=3, shuffle='bitshuffle')
data = np.arange(100000000, dtype='int32').reshape(10000, 10000)
z = zarr.create_array(store='data/example-5.zarr', shape=data.shape, dtype=data.dtype, chunks=(1000, 1000), compressors=compressors)
z[:] = data
print(z.compressors)
''',
    # 18
    '''print(z.info)
''',
    # 19
    '''print(z.info_complete())
''',
    # 20
    '''z_no_compress = zarr.create_array(store='data/example-uncompressed.zarr', shape=(10000, 10000), chunks=(1000, 1000), dtype='int32', compressors=None)
print(f"Compressors: {z_no_compress.compressors}")
''',
    # 21
    '''data = np.arange(100000000, dtype='int32').reshape(10000, 10000)
z = zarr.create_array(store='data/example-6.zarr', shape=data.shape, dtype=data.dtype, chunks=(1000, 1000), compressors=zarr.codecs.GzipCodec(level=1))
z[:] = data
print(f"Compressors: {z.compressors}")
''',
    # 22
    '''import lzma
from zarr.codecs.numcodecs import LZMA

lzma_filters = [dict(id=lzma.FILTER_DELTA, dist=4), dict(id=lzma.FILTER_LZMA2, preset=1)]
compressors = LZMA(filters=lzma_filters)
data = np.arange(100000000, dtype='int32').reshape(10000, 10000)
z = zarr.create_array(store='data/example-7.zarr', shape=data.shape, dtype=data.dtype, chunks=(1000, 1000), compressors=compressors)
print(f"Compressors: {z.compressors}")
''',
    # 23
    '''from zarr.codecs.numcodecs import Delta

filters = [Delta(dtype='int32')]
compressors = zarr.codecs.BloscCodec(cname='zstd', clevel=1, shuffle='shuffle')
data = np.arange(100000000, dtype='int32').reshape(10000, 10000)
z = zarr.create_array(store='data/example-9.zarr', shape=data.shape, dtype=data.dtype, chunks=(1000, 1000), filters=filters, compressors=compressors)
print(z.info_complete())
''',
    # 24
    '''data = np.arange(10) ** 2
z = zarr.create_array(store='data/example-10.zarr', shape=data.shape, dtype=data.dtype)
z[:] = data
print(z[:])
print(z.get_coordinate_selection([2, 5]))
''',
    # 25
    '''z.set_coordinate_selection([2, 5], [-1, -2])
print(z[:])
''',
    # 26
    '''data = np.arange(15).reshape(3, 5)
z = zarr.create_array(store='data/example-11.zarr', shape=data.shape, dtype=data.dtype)
z[:] = data
print(z[:])
''',
    # 27
    '''print(z.get_coordinate_selection(([0, 2], [1, 3])))
''',
    # 28
    '''z.set_coordinate_selection(([0, 2], [1, 3]), [-1, -2])
print(z[:])
''',
    # 29
    '''print(z.vindex[[0, 2], [1, 3]])
z.vindex[[0, 2], [1, 3]] = [-3, -4]
''',
    # 30
    '''print(z[:])
''',
    # 31
    '''print(z[[0, 2], [1, 3]])
''',
    # 32
    '''print(z[1, [1, 3]])
print(z[[1, 1], [1, 3]])
''',
    # 33
    '''data = np.arange(10) ** 2
z = zarr.create_array(store='data/example-12.zarr', shape=data.shape, dtype=data.dtype)
z[:] = data
print(z[:])
''',
    # 34
    '''sel = np.zeros_like(z, dtype=bool)
sel[2] = True
sel[5] = True
print(z.get_mask_selection(sel))
''',
    # 35
    '''z.set_mask_selection(sel, [-1, -2])
print(z[:])
''',
    # 36
    '''data = np.arange(15).reshape(3, 5)
z = zarr.create_array(store='data/example-13.zarr', shape=data.shape, dtype=data.dtype)
z[:] = data
print(z[:])
''',
    # 37
    '''sel = np.zeros_like(z, dtype=bool)
sel[0, 1] = True
sel[2, 3] = True
print(z.get_mask_selection(sel))
''',
    # 38
    '''z.set_mask_selection(sel, [-1, -2])
print(z[:])
''',
    # 39
    '''print(z.vindex[sel])
''',
    # 40
    '''
z.vindex[sel] = [-3, -4]
print(z[:])
''',
    # 41
    '''data = np.arange(15).reshape(3, 5)
z = zarr.create_array(store='data/example-14.zarr', shape=data.shape, dtype=data.dtype)
z[:] = data
print(z[:])
''',
    # 42
    '''print(z.get_orthogonal_selection(([0, 2], slice(None))))  # select first and third rows
''',
    # 43
    '''print(z.get_orthogonal_selection((slice(None), [1, 3])))  # select second and fourth columns
''',
    # 44
    '''print(z.get_orthogonal_selection(([0, 2], [1, 3])))  # select rows [0, 2] and columns [1, 3]
''',
    # 45
    '''z.set_orthogonal_selection(([0, 2], [1, 3]), [[-1, -2], [-3, -4]])
''',
    # 46
    '''data = np.arange(15).reshape(3, 5)
z = zarr.create_array(store='data/example-15.zarr', shape=data.shape, dtype=data.dtype)
z[:] = data
print(z.oindex[[0, 2], :])  # select first and third rows
''',
    # 47
    '''print(z.oindex[:, [1, 3]])  # select second and fourth columns
''',
    # 48
    '''print(z.oindex[[0, 2], [1, 3]])  # select rows [0, 2] and columns [1, 3]
''',
    # 49
    '''z.oindex[[0, 2], [1, 3]] = [[-1, -2], [-3, -4]]
print(z[:])
''',
    # 50
    '''data = np.arange(15).reshape(3, 5)
z = zarr.create_array(store='data/example-16.zarr', shape=data.shape, dtype=data.dtype)
z[:] = data
print(np.all(z.oindex[[0, 2], :] == z[[0, 2], :]))
''',
    # 51
    '''data = np.arange(100).reshape(10, 10)
z = zarr.create_array(store='data/example-17.zarr', shape=data.shape, dtype=data.dtype, chunks=(3, 3))
z[:] = data
''',
    # 52
    '''print(z.get_block_selection(1))
''',
    # 53
    '''print(z[3:6])
''',
    # 54
    '''print(z.blocks[1])
''',
    # 55
    '''print(z.blocks[0, 1:3])
''',
    # 56
    '''z = zarr.create_array(store='data/example-18.zarr', shape=(6, 6), dtype=int, chunks=(2, 2))
''',
    # 57
    '''z.set_block_selection((1, 0), 1)
print(z[...])
''',
    # 58
    '''z.blocks[:, 2] = 7
print(z[...])
''',
    # 59
    '''print(z.blocks[2, 1:3])
''',
    # 60
    '''a = zarr.create_array('data/example-20.zarr', shape=(10000, 10000), shards=(1000, 1000), chunks=(100, 100), dtype='uint8')
a[:] = (np.arange(10000 * 10000) % 256).astype('uint8').reshape(10000, 10000)
print(a.info_complete())
''',
    # 61
    '''import zarr
zarr.config.set({"array.rectilinear_chunks": True})
''',
    # 62
    '''z = zarr.create_array(
    store=zarr.storage.MemoryStore(),
    shape=(60, 100),
    chunks=[[10, 20, 30], [50, 50]],
    dtype='int32',
)
print(z.info)
''',
    # 63
    '''import numpy as np
data = np.arange(60 * 100, dtype='int32').reshape(60, 100)
z[:] = data
# Read a slice that spans the first two chunks (sizes 10 and 20) along axis 0
print(z[5:25, 0:5])
''',
    # 64
    '''print(z.write_chunk_sizes)
''',
    # 65
    '''z_regular = zarr.create_array(
    store=zarr.storage.MemoryStore(),
    shape=(100, 80),
    chunks=(30, 40),
    dtype='int32',
)
print(z_regular.write_chunk_sizes)
''',
    # 66
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
    # 67
    '''z.append(np.arange(10, dtype='float64'))
print(f"After append:  shape={z.shape}, chunk_sizes={z.write_chunk_sizes}")
''',
    # 68
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
    # 69
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
]

GROUPS: list[str] = [
    # 0
    '''import zarr
store = zarr.storage.MemoryStore()
root = zarr.create_group(store=store)
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
    '''print(root.tree())
''',
    # 7
    '''root = zarr.open_group('data/group.zarr', mode='w')
print(root)
''',
    # 8
    '''z = root.create_array(name='foo/bar/baz', shape=(10000, 10000), chunks=(1000, 1000), dtype='int32')
print(z)
''',
    # 9
    '''from zarr import create_hierarchy
from zarr.core.group import GroupMetadata
from zarr.storage import LocalStore

from pprint import pprint
import io

node_spec = {'a/b/c': GroupMetadata()}
nodes_created = dict(create_hierarchy(store=LocalStore(root='data'), nodes=node_spec))
# Report nodes (pprint is used for cleaner rendering in the docs)
output = io.StringIO()
pprint(nodes_created, stream=output, width=60)
print(output.getvalue())
''',
    # 10
    '''store = zarr.storage.MemoryStore()
root = zarr.group(store=store)
foo = root.create_group('foo')
bar = foo.create_array(name='bar', shape=1000000, chunks=100000, dtype='int64')
bar[:] = 42
baz = foo.create_array(name='baz', shape=(1000, 1000), chunks=(100, 100), dtype='float32')
baz[:] = 4.2
print(root.info)
''',
    # 11
    '''print(foo.info)
''',
    # 12
    '''print(bar.info_complete())
''',
    # 13
    '''print(baz.info)
''',
    # 14
    '''print(root.tree())
''',
    # 15
    '''destination_store = zarr.storage.MemoryStore()
new_group = root.copy_to(destination_store, overwrite=True)
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
    # 8
    '''arr = zarr.create_array(store="memory://attributes-nan-demo", shape=(1,), dtype="f8")
with zarr.config.set({"attributes.non_finite_floats": "raise"}):
    try:
        arr.attrs["scale"] = float("nan")
    except ValueError as e:
        print(e)
''',
]

STORAGE: list[str] = [
    # 0
    '''import zarr

# Implicitly create a writable LocalStore
group = zarr.create_group(store='data/foo/bar')
print(group)
''',
    # 1
    '''# Implicitly create a read-only FsspecStore
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
    '''group = zarr.open_group(
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
    '''store = zarr.storage.FsspecStore.from_url(
   's3://noaa-nwm-retro-v2-zarr-pds',
   read_only=True,
   storage_options={'anon': True}
)
group = zarr.open_group(store=store, mode='r')
print(group)
''',
    # 11
    '''import fsspec
fs = fsspec.filesystem(
   's3', anon=True, asynchronous=True,
   client_kwargs={'endpoint_url': "https://noaa-nwm-retro-v2-zarr-pds.s3.amazonaws.com"}
)
store = zarr.storage.FsspecStore(fs)
print(store)
''',
    # 12
    '''data = {}
store = zarr.storage.MemoryStore(data)
array = zarr.create_array(store=store, shape=(2,), dtype='float64')
print(array)
''',
    # 13
    '''from zarr.storage import ObjectStore
from obstore.store import MemoryStore

store = ObjectStore(MemoryStore())
array = zarr.create_array(store=store, shape=(2,), dtype='float64')
print(array)
''',
    # 14
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

# Note: pprint can be used without capturing the output regularly
output = io.StringIO()
pprint(dict(sorted(consolidated_metadata.items())), stream=output, width=60)
print(output.getvalue())
''',
    # 5
    '''print(consolidated['a'])  # no read / HTTP request to the Store is required
''',
    # 6
    '''child = group.create_group('child', attributes={'kind': 'child'})
grandchild = child.create_group('child', attributes={'kind': 'grandchild'})
consolidated = zarr.consolidate_metadata("memory://consolidated-metadata-demo")

output = io.StringIO()
pprint(consolidated['child'].metadata.consolidated_metadata, stream=output, width=60)
print(output.getvalue())
''',
]
# fmt: on

PAGES: dict[str, list[str]] = {
    "quickstart": QUICKSTART,
    "arrays": ARRAYS,
    "groups": GROUPS,
    "attributes": ATTRIBUTES,
    "storage": STORAGE,
    "consolidated_metadata": CONSOLIDATED_METADATA,
}
