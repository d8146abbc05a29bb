#!/usr/bin/env bash
# Makes the demo's own test certificate authority and the certificates its transport responders
# present (src/service/demo-transport.ts), into fixtures/demo-transport/. Run once; the output is
# committed, so the demo needs no openssl. The keys are demo-only: nothing but `serve --demo`
# trusts this authority, and only for the demo's own loopback responders.
set -euo pipefail
out="$(cd "$(dirname "$0")/.." && pwd)/fixtures/demo-transport"
days=7300 # twenty years
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
  -subj '/CN=spoof-checker demo authority (not for real use)' -keyout ca.key -out ca.pem \
  -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' 2>/dev/null
leaf() { # name, SANs
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$2" -keyout "$1.key" -out "$1.csr" 2>/dev/null
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' "$3" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days "$days" -extfile "$1.ext" -out "$1.pem" 2>/dev/null
}
leaf good mx.sts-enforced.example 'DNS:mx.sts-enforced.example,DNS:mx.sts-testing.example,DNS:mx.sts-broken.example,DNS:mta-sts.sts-enforced.example,DNS:mta-sts.sts-testing.example,DNS:mta-sts.sts-broken.example'
leaf wrong mx.elsewhere.example 'DNS:mx.elsewhere.example'
cp ca.pem good.pem good.key wrong.pem wrong.key "$out/"
echo "wrote $out"
