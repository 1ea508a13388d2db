#!/usr/bin/env bash
# Builds rung's builtin corpus: Jane Austen's six novels from the Debian package r-cran-janeaustenr,
# as one byte-level text file with a document separator (form feed) before every chapter.
#
# Usage: deploy/fetch-builtin-corpus.sh OUT_DIR
#
# Writes OUT_DIR/austen.txt and its manifest OUT_DIR/austen.json:
#   {"package": "r-cran-janeaustenr", "version": "<dpkg version>", "sha256": "<of austen.txt>", ...}
# The text holds the books emma, mansfieldpark, northangerabbey, persuasion, prideprejudice,
# sensesensibility in that order, one line per source line. A line holding only "\f" precedes every
# chapter heading (a line starting with CHAPTER or Chapter) and separates books, so rung's text
# loader (data.doc_separator "\f") sees one document per chapter, plus one short front-matter document
# per book (title, author, volume line). The manifest's "book_first_documents" is the index of each
# book's first document (its front matter): data.builtin_documents: books joins each book's documents.
#
# Idempotent: does nothing when both files exist, the text matches the manifest's sha256 and the
# manifest names the installed package version. Needs Rscript (r-base-core) and r-cran-janeaustenr
# (deploy/install-deps.sh installs both); uses base R only.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
out_dir=$1
package=r-cran-janeaustenr
text_file="$out_dir/austen.txt"
manifest_file="$out_dir/austen.json"

if ! command -v Rscript >/dev/null 2>&1; then
  echo "fetch-builtin-corpus: Rscript not found; install r-base-core (deploy/install-deps.sh)" >&2
  exit 1
fi
if ! version=$(dpkg-query -W -f='${Version}' "$package" 2>/dev/null) || [[ -z "$version" ]]; then
  echo "fetch-builtin-corpus: Debian package $package is not installed (deploy/install-deps.sh)" >&2
  exit 1
fi

manifest_field() {  # manifest_field FILE KEY: the string value of "KEY" in a flat JSON object
  sed -n "s/.*\"$2\"[[:space:]]*:[[:space:]]*\"\([^\"]*\)\".*/\1/p" "$1" | head -n 1
}

if [[ -f "$text_file" && -f "$manifest_file" ]]; then
  have_sha=$(sha256sum "$text_file" | cut -d' ' -f1)
  if [[ "$(manifest_field "$manifest_file" sha256)" == "$have_sha" &&
        "$(manifest_field "$manifest_file" version)" == "$version" ]] &&
     grep -q '"book_first_documents"' "$manifest_file"; then
    echo "fetch-builtin-corpus: $text_file is up to date ($package $version, sha256 $have_sha)"
    exit 0
  fi
fi

mkdir -p "$out_dir"
tmp_text=$(mktemp "$out_dir/.austen.txt.XXXXXX")
tmp_manifest=$(mktemp "$out_dir/.austen.json.XXXXXX")
trap 'rm -f "$tmp_text" "$tmp_manifest"' EXIT

# Prints the number of documents (chapters plus one front matter) of each book on stdout.
book_documents=$(Rscript --vanilla - "$tmp_text" <<'EOF'
args <- commandArgs(trailingOnly = TRUE)
books <- c("emma", "mansfieldpark", "northangerabbey", "persuasion", "prideprejudice",
           "sensesensibility")
separator <- "\f"
out <- character(0)
documents <- integer(0)
for (i in seq_along(books)) {
  lines <- getExportedValue("janeaustenr", books[[i]])
  lines <- enc2utf8(lines)
  heading <- grepl("^(CHAPTER|Chapter)", lines)
  if (!any(heading)) stop("no chapter headings found in ", books[[i]])
  if (i > 1L) out <- c(out, separator)
  # Each line, preceded by a separator line when it is a chapter heading.
  expanded <- rep(lines, times = ifelse(heading, 2L, 1L))
  expanded[which(heading) + seq_len(sum(heading)) - 1L] <- separator
  out <- c(out, expanded)
  documents <- c(documents, sum(heading) + as.integer(!heading[[1]]))
}
connection <- file(args[[1]], open = "wb")
writeLines(out, connection, sep = "\n", useBytes = TRUE)
close(connection)
cat(documents, "\n")
EOF
)
documents=0
book_first_documents=""
for count in $book_documents; do
  book_first_documents+="${book_first_documents:+, }$documents"
  documents=$((documents + count))
done

sha=$(sha256sum "$tmp_text" | cut -d' ' -f1)
bytes=$(stat -c %s "$tmp_text")
cat >"$tmp_manifest" <<EOF
{
  "package": "$package",
  "version": "$version",
  "sha256": "$sha",
  "bytes": $bytes,
  "documents": $documents,
  "books": ["emma", "mansfieldpark", "northangerabbey", "persuasion", "prideprejudice", "sensesensibility"],
  "book_first_documents": [$book_first_documents],
  "doc_separator": "\\f"
}
EOF
chmod 644 "$tmp_text" "$tmp_manifest"
mv -f "$tmp_text" "$text_file"
mv -f "$tmp_manifest" "$manifest_file"
trap - EXIT
echo "fetch-builtin-corpus: wrote $text_file ($bytes bytes, $documents documents, sha256 $sha)"
