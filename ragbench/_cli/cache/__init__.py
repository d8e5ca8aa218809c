"""`ragbench cache`: the caches ragbench keeps outside run folders, listed, pruned and removed one by one."""
