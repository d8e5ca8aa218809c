"""Runs one of DeepResearch Bench's modules (argv[1], e.g. utils.scrape) as `python -m` runs it, from the current
folder, with the HTTP calls requests makes to https://r.jina.ai/ sent to $FAKE_JINA_URL instead: the reader's URL
is written into the released utils/api.py, so the call is redirected under it and the script is run unchanged."""

import os
import runpy
import sys

import requests

JINA = "https://r.jina.ai/"
_request = requests.Session.request


def _redirected(self, method, url, *args, **kwargs):
    if isinstance(url, str) and url.startswith(JINA):
        url = os.environ["FAKE_JINA_URL"] + url[len(JINA) :]
    return _request(self, method, url, *args, **kwargs)


requests.Session.request = _redirected
sys.path.insert(0, os.getcwd())
module, sys.argv = sys.argv[1], sys.argv[1:]
runpy.run_module(module, run_name="__main__", alter_sys=True)
