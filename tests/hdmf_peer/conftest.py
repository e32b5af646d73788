"""tests/hdmf_peer holds the halves of the peer checks with hdmf-zarr, driven by
tests/test_hdmf_peer.py: nothing here is a test module, and check_hdmf_reads.py runs only
in .venv-hdmf (it imports hdmf_zarr; read_nwb.py runs there and in the main venv), so
none is collected (doctests included)."""

collect_ignore = ["modify_with_zarrkit.py", "check_hdmf_reads.py", "read_nwb.py"]
