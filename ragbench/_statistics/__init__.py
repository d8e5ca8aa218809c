"""The statistics of ragbench's reports and estimates: the bootstrap, paired tests, multiple testing,
prediction-powered inference and agreement between raters and with human labels. Plain numbers in and out: no other
module of ragbench is imported, so every layer may use them."""
