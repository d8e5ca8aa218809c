"""Parallel index builds on a pool of Ray actors (`ragbench index build --ray`): `build`."""
