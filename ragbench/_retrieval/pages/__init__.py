"""Pages as passages: ViDoRe's datasets read offline (`vidore_data`), a page corpus (`corpus`), late-interaction
scoring as colpali-engine scores (`maxsim`), the multi-vector index a run saves and reuses (`index`) and the
`colpali` retriever over it (`late_interaction`)."""
