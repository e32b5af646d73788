"""tests/hdmf_peer holds the two halves of the peer check with hdmf-zarr, driven by
tests/test_hdmf_peer.py: nothing here is a test module, and check_hdmf_reads.py runs only
in .venv-hdmf (it imports hdmf_zarr), so neither is collected (doctests included)."""

collect_ignore = ["modify_with_zarrkit.py", "check_hdmf_reads.py"]
