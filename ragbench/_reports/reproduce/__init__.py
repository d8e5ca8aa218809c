"""`ragbench reproduce`: a seed paper's table rows run as the paper ran them, and whether this machine can run them."""
