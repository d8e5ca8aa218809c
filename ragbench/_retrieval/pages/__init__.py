"""Pages as passages: ViDoRe's datasets read offline (`vidore_data`), a page corpus (`corpus`), pages encoded
(`encoding`), late-interaction scoring as colpali-engine scores (`maxsim`), the pages shown so that upstream's
figures over every page's score can be computed from them (`ranking`), the multi-vector index a run saves and
reuses (`index`) with its model's identity by its files (`model_files`), the `colpali` retriever over it
(`late_interaction`), `siglip`'s one vector a page (`single_vector`), and the index encoded in shards on Ray
(`shards`) by `ragbench index build` (`build`)."""
