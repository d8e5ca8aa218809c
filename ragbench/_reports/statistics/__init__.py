"""The statistics of ragbench's reports: the bootstrap, paired tests, multiple testing, prediction-powered inference and
agreement between raters and with human labels."""
