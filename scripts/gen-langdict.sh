#!/bin/sh
# Rebuilds catalog/ko_words.gz, ru_words.gz and th_words.gz (the search
# tokenizer's Korean, Russian and Thai word tables, see catalog/langdict.go)
# and de_, fr_, es_, pt_ and it_words.gz (German, French, Spanish, Portuguese
# and Italian, catalog/latin.go)
# from the hand lists in scripts/langdict/ (written for this repository).
# The shipped tables are built this way: no GPL data in the binary.
# MUELLER=1 adds, for Russian, the Mueller English–Russian dictionary as
# Debian's mueller7-dict (2002.02.27-13) ships it, read backwards: that
# table is GPL-2.0-or-later (scripts/langdict/LICENSE.mueller) and so would
# be a binary built with it; for your own builds only. Needs apt-get
# (download only, nothing is installed) and dpkg-deb.
set -eu
cd "$(dirname "$0")/.."
if [ "${MUELLER:-0}" = 0 ]; then
	go run scripts/langdict/gen.go -lang ru -hand scripts/langdict/ru.txt -out catalog/ru_words.gz
else
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get download mueller7-dict=2002.02.27-13 >/dev/null && dpkg-deb -x mueller7-dict_*.deb x)
	d="$tmp/x/usr/share/dictd"
	go run scripts/langdict/gen.go -lang ru -hand scripts/langdict/ru.txt \
		-mueller-index "$d/mueller7.index" -mueller-dict "$d/mueller7.dict.dz" -out catalog/ru_words.gz
fi
go run scripts/langdict/gen.go -lang ko -hand scripts/langdict/ko.txt -out catalog/ko_words.gz
go run scripts/langdict/gen.go -lang th -hand scripts/langdict/th.txt -out catalog/th_words.gz
for l in de fr es pt it; do
	go run scripts/langdict/gen.go -lang $l -hand scripts/langdict/$l.txt -out catalog/${l}_words.gz
done
