"""Pages as passages: ViDoRe's datasets read offline (`vidore_data`), a page corpus (`corpus`), pages encoded
(`encoding`), late-interaction scoring as colpali-engine scores (`maxsim`), the multi-vector index a run saves and
reuses (`index`), the `colpali` retriever over it (`late_interaction`), `siglip`'s one vector a page
(`single_vector`), and the index encoded in shards on Ray (`shards`) by `ragbench index build` (`build`)."""
