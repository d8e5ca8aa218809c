"""`ragbench compare`: runs paired on the examples both scored, tested, tabled and plotted, with what differs between
them."""
