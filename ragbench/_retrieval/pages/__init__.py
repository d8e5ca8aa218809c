"""Pages as passages: what a page retriever reads of its pages (`corpus`: ViDoRe's datasets read offline in
`vidore_data`, their pages in `vidore_pages`; a folder of page images, `folder`), the pages of a corpus's rows and
their scores (`page_set`), pages encoded (`encoding`), late-interaction scoring as colpali-engine scores (`maxsim`),
the pages shown so that upstream's figures over every page's score can be computed from them (`ranking`), the index
a run saves and reuses (`index`) with its model's identity by its files (`model_files`), what the page retrievers
share (`page_retriever`), the `colpali` retriever over it (`late_interaction`), `siglip`'s one vector a page
(`single_vector`), and the index encoded in shards on Ray (`shards`) by `ragbench index build` (`build`)."""
