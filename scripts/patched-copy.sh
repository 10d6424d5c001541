# patched-copy.sh — what scripts/update-go-sdk.sh and scripts/update-goja.sh share (sourced by
# them, not run): fetch a module version and rebuild third_party/<name> from it with a patch.

# module_dir MOD VERSION prints the module cache directory of MOD@VERSION (downloaded through the
# Go module proxy when missing); it fails naming the module when there is none.
module_dir() {
  local dir
  dir=$(GOFLAGS= go mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$dir" ] || { echo "go mod download $1@$2 gave no directory" >&2; return 1; }
  echo "$dir"
}

# patched_copy SRC DEST PATCH PKGS [FILE ...] replaces DEST with SRC's LICENSE, go.mod and go.sum,
# the non-test .go files of each package in PKGS (paths relative to SRC, "." for the root) and
# each FILE (relative to SRC), with PATCH applied.
patched_copy() {
  local src=$1 dest=$2 patchfile=$3 pkgs=$4 tmp p f
  shift 4
  tmp=$(mktemp -d)
  cp "$src/LICENSE" "$src/go.mod" "$src/go.sum" "$tmp/"
  for p in $pkgs; do
    mkdir -p "$tmp/$p"
    for f in "$src/$p"/*.go; do
      case "$f" in *_test.go) ;; *) cp "$f" "$tmp/$p/" ;; esac
    done
  done
  for f in "$@"; do
    cp "$src/$f" "$tmp/$f"
  done
  chmod -R u+w "$tmp"
  if ! patch -p1 -d "$tmp" --no-backup-if-mismatch < "$patchfile"; then
    rm -rf "$tmp"
    return 1
  fi
  rm -rf "$dest"
  mv "$tmp" "$dest"
}
