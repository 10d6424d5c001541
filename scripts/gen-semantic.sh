#!/bin/sh
# Rebuilds catalog/related_wordnet.gz (the search's semantic signal) from
# WordNet 3.0 as Debian's wordnet-base package ships it. Licence of the
# input (and so of the table): catalog/LICENSE.wordnet (the WordNet 3.0
# licence, permissive, copyright Princeton University).
set -eu
cd "$(dirname "$0")/.."
if [ ! -f /usr/share/wordnet/data.noun ]; then
	apt-get install -y wordnet-base
fi
go run scripts/semantic/gen.go -wordnet /usr/share/wordnet -out catalog/related_wordnet.gz
