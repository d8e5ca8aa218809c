"""What several benchmark folders share: the --data checks, the task options, the corpus commands."""
