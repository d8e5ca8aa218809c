"""Parallel index builds on Ray Data (`ragbench index build --ray`): `build`."""
