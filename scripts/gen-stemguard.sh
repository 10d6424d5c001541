#!/bin/sh
# Rebuilds catalog/stem_guard.gz (the words the search index's stemmer keeps
# whole, catalog/tokenize.go) from WordNet 3.0 as Debian's wordnet-base
# package ships it (licence: catalog/LICENSE.wordnet). Needs apt-get.
set -eu
cd "$(dirname "$0")/.."
if [ ! -f /usr/share/wordnet/index.noun ]; then
	apt-get install -y wordnet-base
fi
go run scripts/stemguard/gen.go -wordnet /usr/share/wordnet -out catalog/stem_guard.gz
