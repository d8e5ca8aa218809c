"""Judging in a run: a judge's repeats and interchangeable judges (the raters), and the human labels and price table the
results check the judges against and price them at."""
