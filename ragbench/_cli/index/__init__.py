"""`ragbench index build` and `ragbench index cache`, and the index cache's listing."""
