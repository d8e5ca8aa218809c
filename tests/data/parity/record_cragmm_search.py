"""Build tiny random-weight CLIP and BGE-shaped (BERT) models from configs, chromadb indexes as cragmm-search-pipeline's
generate_index.py writes them (collections image_embeddings and web_search_embeddings, cosine), run the released
UnifiedSearchPipeline and CRAG-MM's get_rag_context over them unchanged (only snapshot_download stood in by the
local folder), and record the results. Not a test: it runs in a scratch venv holding cragmm-search-pipeline 0.5.1
(chromadb 1.5.9, transformers 4.57.6, torch 2.13.0+cpu) and a checkout of facebookresearch/CRAG-MM at 36b6b4b:

    python record_cragmm_search.py OUT CRAG_MM_CHECKOUT

OUT receives models/, images/, indexes/ (as the pipeline left them) and cragmm_search.json; OUT-pristine the
indexes as written, before the pipeline opened them (tests/data/crag_mm_search/indexes)."""

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import torch
from PIL import Image, ImageDraw

OUT = Path(sys.argv[1])
CRAG = Path(sys.argv[2])  # a checkout of facebookresearch/CRAG-MM at 36b6b4b
MODELS, INDEXES, IMAGES = OUT / "models", OUT / "indexes", OUT / "images"
WORDS = (
    "the a of is in what who where when how tower bridge city river museum church park castle paris london rome "
    "built height old famous tall red blue green stone glass year people visit"
).split()

SMALL = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2)  # each encoder's


def tiny_clip(folder):
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for ch in "abcdefghijklmnopqrstuvwxyz":
        vocab[ch] = len(vocab)
        vocab[ch + "</w>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    tokenizer = CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"))
    processor = CLIPProcessor(
        image_processor=CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}),
        tokenizer=tokenizer,
    )
    torch.manual_seed(0)
    config = CLIPConfig(
        text_config=dict(
            **SMALL,
            vocab_size=len(vocab),
            max_position_embeddings=32,
            bos_token_id=0,
            eos_token_id=1,
            pad_token_id=1,
        ),
        vision_config=dict(
            **SMALL,
            image_size=32,
            patch_size=8,
        ),
        projection_dim=8,
    )
    CLIPModel(config).eval().save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def tiny_bge(folder):
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, **{w: i + 4 for i, w in enumerate(WORDS)}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="[PAD]",
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        model_max_length=512,
    )
    fast.save_pretrained(folder)
    torch.manual_seed(1)
    BertModel(BertConfig(**SMALL, vocab_size=len(vocab), max_position_embeddings=600)).eval().save_pretrained(folder)
    return folder


def picture(seed, size=(48, 40)):
    rng = np.random.default_rng(seed)
    image = Image.new("RGB", size, tuple(int(v) for v in rng.integers(0, 256, 3)))
    draw = ImageDraw.Draw(image)
    for _ in range(4):
        x0, y0 = int(rng.integers(0, size[0] - 8)), int(rng.integers(0, size[1] - 8))
        draw.rectangle(
            [x0, y0, x0 + int(rng.integers(4, 20)), y0 + int(rng.integers(4, 20))],
            fill=tuple(int(v) for v in rng.integers(0, 256, 3)),
        )
    return image


ENTITIES = [
    ("Eiffel Tower", {"name": "Eiffel Tower", "height": "330 m", "city": "Paris"}),
    ("Tower Bridge", {"name": "Tower Bridge", "opened": "1894", "note": "crosses the Thames – London"}),
    ("Colosseum", {"name": "Colosseum", "built": "70–80 AD"}),
    ("Empty Park", {}),
    ("Big Ben", {"name": "Big Ben", "height": "96 m"}),
]
IMAGE_ROWS = [  # (entities as stored: a name or a list), for image i
    "Eiffel Tower",
    ["Tower Bridge", "Big Ben"],
    "Colosseum",
    "Empty Park",
    ["Eiffel Tower"],
    "Big Ben",
    ["Colosseum", "Tower Bridge"],
    "Tower Bridge",
]
PAGES = [
    (
        "https://example.org/paris",
        "Paris travel guide",
        "The Eiffel Tower is a famous tower in Paris built in 1889.",
        ["tower paris built year", "paris city river people visit", "the old stone church in paris"],
    ),
    (
        "https://example.org/london_chunky",
        "London bridges",
        "Tower Bridge crosses the river in London.",
        ["tower bridge london river", "the red bridge of london"],
    ),
    (
        "https://example.org/rome",
        "Rome",
        "The Colosseum in Rome is old and famous.",
        ["rome castle stone old", "museum in rome"],
    ),
    ("https://example.org/museum", "", "A glass museum.", ["glass museum green park"]),
    ("https://example.org/nosnippet", "No snippet", "", ["blue glass tower"]),
]


def build_image_index(folder, clip, processor, settings):
    import chromadb
    from cragmm_search.image_search_mock_api.image_search import extract_features

    client = chromadb.PersistentClient(path=str(folder))
    collection = client.create_collection(name="image_embeddings", metadata={"hnsw:space": "cosine", **settings})
    info = dict(ENTITIES)
    embs, metas = [], []
    for i, entities in enumerate(IMAGE_ROWS):
        image = Image.open(IMAGES / f"index_{i}.png")
        embs.append(extract_features(clip, processor, image, torch.device("cpu"))[0].tolist())
        names = entities if isinstance(entities, list) else [entities]
        metas.append(
            {
                "image_url": f"https://example.org/img/{i}.png",
                "entities": json.dumps(entities),
                "info": json.dumps({n: info[n] for n in names}),
            }
        )
    collection.add(embeddings=embs, metadatas=metas, ids=[str(i) for i in range(len(embs))])


def build_web_index(folder, bge, tok, settings):
    import chromadb
    from cragmm_search.web_search_mock_api.api.web_search import extract_features

    client = chromadb.PersistentClient(path=str(folder))
    collection = client.create_collection(name="web_search_embeddings", metadata={"hnsw:space": "cosine", **settings})
    for url, name, snippet, chunks in PAGES:
        fields = [f"{name} {snippet}"] + chunks
        embs = extract_features(bge, tok, fields, torch.device("cpu"))
        collection.add(
            embeddings=embs.tolist(),
            ids=[f"{url}_chunk_{i}" for i in range(len(fields))],
            metadatas=[{"page_name": name, "page_snippet": snippet, "page_url": url}] * len(fields),
        )
    # a later delete and upsert, as an index updated in place would hold them
    collection.delete(ids=["https://example.org/rome_chunk_2"])
    moved = extract_features(bge, tok, ["green park tower in paris"], torch.device("cpu"))
    collection.upsert(
        ids=["https://example.org/museum_chunk_1"],
        embeddings=moved.tolist(),
        metadatas=[
            {"page_name": "Museum (moved)", "page_snippet": "Now a park.", "page_url": "https://example.org/museum"}
        ],
    )


def build_graph_index(folder, bge, tok, settings):
    """Many one-chunk pages under a sparse HNSW graph (M 4, ef 8 to build, ef_search 4), so that chromadb's search is
    approximate: its lists differ from an exhaustive search's."""
    import chromadb
    from cragmm_search.web_search_mock_api.api.web_search import extract_features

    client = chromadb.PersistentClient(path=str(folder))
    collection = client.create_collection(name="web_search_embeddings", metadata={"hnsw:space": "cosine", **settings})
    rng = np.random.default_rng(7)
    texts = [" ".join(rng.choice(WORDS, size=int(rng.integers(2, 7)))) for _ in range(GRAPH_PAGES)]
    embs = extract_features(bge, tok, texts, torch.device("cpu"))
    urls = [f"https://example.org/many/{i}" for i in range(GRAPH_PAGES)]
    collection.add(
        embeddings=embs.tolist(),
        ids=[f"{url}_chunk_0" for url in urls],
        metadatas=[{"page_name": text, "page_snippet": text, "page_url": url} for text, url in zip(texts, urls)],
    )
    collection.delete(ids=[f"{url}_chunk_0" for url in urls[::6]])  # a batch of deletes: marked in the saved graph


GRAPH_PAGES = 600
GRAPH = {
    "hnsw:M": 4,
    "hnsw:construction_ef": 8,
    "hnsw:search_ef": 4,
    "hnsw:batch_size": 100,
    "hnsw:sync_threshold": 100,
}


def plain(value):
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def main():
    from transformers import AutoModel, AutoTokenizer, CLIPModel, CLIPProcessor

    shutil.rmtree(OUT, ignore_errors=True)
    IMAGES.mkdir(parents=True)
    for i in range(len(IMAGE_ROWS)):
        picture(i).save(IMAGES / f"index_{i}.png")
    picture(100, (64, 80)).save(IMAGES / "query_0.png")
    query_1 = picture(3)  # index image 3, a few pixels changed
    query_1.putpixel((0, 0), (0, 0, 0))
    query_1.save(IMAGES / "query_1.png")
    picture(1).convert("L").save(IMAGES / "query_2.png")  # greyscale: the processor converts to RGB
    clip_dir, bge_dir = tiny_clip(MODELS / "clip"), tiny_bge(MODELS / "bge")
    clip, processor = CLIPModel.from_pretrained(clip_dir), CLIPProcessor.from_pretrained(clip_dir)
    bge, tok = AutoModel.from_pretrained(bge_dir), AutoTokenizer.from_pretrained(bge_dir)
    layouts = {"mixed": {"hnsw:batch_size": 3, "hnsw:sync_threshold": 3}, "buffered": {}, "graph": GRAPH}
    for layout, settings in layouts.items():
        build_image_index(INDEXES / layout / "image", clip, processor, settings if layout != "graph" else {})
        if layout == "graph":
            build_graph_index(INDEXES / layout / "web", bge, tok, settings)
        else:
            build_web_index(INDEXES / layout / "web", bge, tok, settings)
    pristine = OUT.parent / (OUT.name + "-pristine")
    shutil.rmtree(pristine, ignore_errors=True)
    shutil.copytree(INDEXES, pristine)

    import huggingface_hub

    sys.path.insert(0, str(CRAG))
    record = {"layouts": {}}
    for layout in layouts:
        where = {"image": str(INDEXES / layout / "image"), "web": str(INDEXES / layout / "web")}

        def fake(repo_id, repo_type=None, revision=None, where=where):  # the hub, stood in: the local folder
            return where[repo_id]

        huggingface_hub.snapshot_download = fake
        import cragmm_search.image_search_mock_api.image_kg as image_kg

        image_kg.snapshot_download = fake
        from cragmm_search.search import UnifiedSearchPipeline
        from utils.retriever import get_rag_context

        pipeline = UnifiedSearchPipeline(
            image_model_name=str(clip_dir),
            image_hf_dataset_id="image",
            text_model_name=str(bge_dir),
            web_hf_dataset_id="web",
        )
        searches = []
        for name in ("query_0.png", "query_1.png", "query_2.png", "index_5.png"):
            for k in (3, 30):
                searches.append({"image": name, "k": k, "results": plain(pipeline(Image.open(IMAGES / name), k=k))})
        for text in ("tower in paris", "what is the old museum in rome", "zebra", "", "bridge london river people"):
            for k in (2, 50) if layout != "graph" else (10,):
                searches.append({"text": text, "k": k, "results": plain(pipeline(text, k=k))})
        if layout == "graph":  # more queries of the approximate graph, and no contexts (32,000 characters each)
            for text in ("old stone church", "people visit the famous museum", "red glass tower year", "city park"):
                searches.append({"text": text, "k": 10, "results": plain(pipeline(text, k=10))})
        contexts = []
        asked = () if layout == "graph" else ("what tower is this", "how tall is it", "who built this bridge")
        for name, query in zip(("query_1.png", "index_5.png", "query_0.png"), asked):
            for image_search, web_search in ((True, True), (True, False), (False, True)):
                contexts.append(
                    {
                        "image": name,
                        "query": query,
                        "image_search": image_search,
                        "web_search": web_search,
                        "context": get_rag_context(
                            query, Image.open(IMAGES / name), pipeline, image_search, web_search
                        ),
                    }
                )
        record["layouts"][layout] = {"searches": searches, "contexts": contexts}
    (OUT / "cragmm_search.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
