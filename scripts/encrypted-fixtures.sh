#!/usr/bin/env bash
# Writes the encrypted PDFs of test/fixtures/encrypted from samples/contract.pdf with qpdf (one
# per method of the standard security handler) and Ghostscript (a second producer). The unit
# tests read them as committed; run this again only to add a case. Passwords: user "user" where
# a file has one, owner "owner"; utf8-r6.pdf uses "üser" and "ówner" (SASLprep).
set -euo pipefail
cd "$(dirname "$0")/.."
in=samples/contract.pdf
out=test/fixtures/encrypted
mkdir -p "$out"
q() { qpdf --allow-weak-crypto "$@"; }
q --encrypt '' owner 40 -- "$in" "$out/rc4-40-r2.pdf"
q --encrypt '' owner 128 --use-aes=n -- "$in" "$out/rc4-128-r3.pdf"
q --encrypt user owner 128 --use-aes=n -- "$in" "$out/rc4-128-r3-user.pdf"
q --encrypt '' owner 128 --use-aes=n --modify=none -- "$in" "$out/rc4-128-r3-nomodify.pdf"
q --encrypt '' owner 128 --use-aes=y -- "$in" "$out/aes-128-r4.pdf"
q --encrypt '' owner 128 --use-aes=y --cleartext-metadata -- "$in" "$out/aes-128-r4-cleartext-metadata.pdf"
q --object-streams=generate --encrypt '' owner 128 --use-aes=y -- "$in" "$out/aes-128-r4-object-streams.pdf"
q --encrypt '' owner 256 --force-R5 -- "$in" "$out/aes-256-r5.pdf"
q --encrypt '' owner 256 -- "$in" "$out/aes-256-r6.pdf"
q --encrypt user owner 256 -- "$in" "$out/aes-256-r6-user.pdf"
q --encrypt '' owner 256 --form=n --modify-other=n --annotate=n -- "$in" "$out/aes-256-r6-noform.pdf"
q --encrypt 'üser' 'ówner' 256 -- "$in" "$out/utf8-r6.pdf"
gs -q -dNOPAUSE -dBATCH -dSAFER -sDEVICE=pdfwrite -sOwnerPassword=owner -dEncryptionR=3 -dKeyLength=128 -dPermissions=-4 \
  -sOutputFile="$out/ghostscript-rc4-128-r3.pdf" "$in"
